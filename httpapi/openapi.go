package httpapi

import _ "embed"

// openAPIDocument is the OpenAPI 3.1 description of the whole API, served
// at GET /v1/openapi.json. openapi_test.go keeps it in step with the route
// table.
//
//go:embed openapi.json
var openAPIDocument []byte
