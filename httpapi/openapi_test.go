package httpapi_test

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/docketq/docket/httpapi"
)

// openAPIDoc is the part of an OpenAPI document the tests read.
type openAPIDoc struct {
	OpenAPI    string                                 `json:"openapi"`
	Paths      map[string]map[string]openAPIOperation `json:"paths"`
	Components struct {
		SecuritySchemes map[string]any `json:"securitySchemes"`
	} `json:"components"`
}

type openAPIOperation struct {
	OperationID string                 `json:"operationId"`
	Security    *[]map[string][]string `json:"security"`
	Parameters  []struct {
		Name string `json:"name"`
		In   string `json:"in"`
	} `json:"parameters"`
	Responses map[string]any `json:"responses"`
}

// loadOpenAPI fetches the served document and also returns it raw.
func loadOpenAPI(t *testing.T, e *adminEnv) (*openAPIDoc, []byte) {
	t.Helper()
	r := e.do("GET", "/v1/openapi.json", "", nil)
	if r.status != 200 {
		t.Fatalf("GET /v1/openapi.json: %d", r.status)
	}
	var doc openAPIDoc
	r.decode(t, &doc)
	return &doc, r.body
}

// openAPIPath converts a net/http pattern to an OpenAPI path: "{id...}"
// becomes "{id}", a trailing "{$}" goes.
func openAPIPath(pattern string) string {
	p := strings.TrimSuffix(pattern, "{$}")
	return strings.ReplaceAll(p, "...}", "}")
}

// TestOpenAPI_Routes fails when a route is served that the document does
// not describe, or the document describes a route that is not served.
func TestOpenAPI_Routes(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	doc, _ := loadOpenAPI(t, e)
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	served := map[string]httpapi.RouteInfo{}
	for _, rt := range e.srv.Routes() {
		served[rt.Method+" "+openAPIPath(rt.Pattern)] = rt
	}
	described := map[string]openAPIOperation{}
	for path, ops := range doc.Paths {
		for method, o := range ops {
			described[strings.ToUpper(method)+" "+path] = o
		}
	}
	for _, k := range slices.Sorted(maps.Keys(served)) {
		if _, ok := described[k]; !ok {
			t.Errorf("route %s is served but not in openapi.json", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(described)) {
		if _, ok := served[k]; !ok {
			t.Errorf("openapi.json describes %s, which is not served", k)
		}
	}
	for k, rt := range served {
		if o, ok := described[k]; ok {
			checkOperation(t, k, rt, o)
		}
	}
}

var openAPIParam = regexp.MustCompile(`\{([A-Za-z_]+)\}`)

// checkOperation checks an operation's security matches the route's access
// and its path parameters match the path's.
func checkOperation(t *testing.T, k string, rt httpapi.RouteInfo, o openAPIOperation) {
	t.Helper()
	want := []map[string][]string{{"tenantKey": {}}}
	switch {
	case rt.Public:
		want = []map[string][]string{}
	case rt.Admin:
		want = []map[string][]string{{"adminKey": {}}}
	}
	if o.Security == nil || !slices.EqualFunc(*o.Security, want, func(a, b map[string][]string) bool {
		return slices.Equal(slices.Sorted(maps.Keys(a)), slices.Sorted(maps.Keys(b)))
	}) {
		t.Errorf("%s: security %v, want %v", k, o.Security, want)
	}
	var inPath, declared []string
	for _, m := range openAPIParam.FindAllStringSubmatch(k, -1) {
		inPath = append(inPath, m[1])
	}
	for _, p := range o.Parameters {
		if p.In == "path" {
			declared = append(declared, p.Name)
		}
	}
	slices.Sort(inPath)
	slices.Sort(declared)
	if !slices.Equal(inPath, declared) {
		t.Errorf("%s: path parameters %v, want %v", k, declared, inPath)
	}
	if o.OperationID == "" || len(o.Responses) == 0 {
		t.Errorf("%s: operationId %q, %d responses", k, o.OperationID, len(o.Responses))
	}
}

// TestOpenAPI_Refs checks every $ref resolves and operation ids are unique.
func TestOpenAPI_Refs(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	doc, raw := loadOpenAPI(t, e)
	var tree map[string]any
	if err := json.Unmarshal(raw, &tree); err != nil {
		t.Fatal(err)
	}
	walkJSON(tree, func(node map[string]any) {
		ref, ok := node["$ref"].(string)
		if !ok {
			return
		}
		if resolveRef(tree, ref) == nil {
			t.Errorf("$ref %q does not resolve", ref)
		}
	})
	for _, scheme := range []string{"tenantKey", "adminKey"} {
		if doc.Components.SecuritySchemes[scheme] == nil {
			t.Errorf("security scheme %s missing", scheme)
		}
	}
	for _, schema := range []string{"Job", "Document", "Problem"} {
		if resolveRef(tree, "#/components/schemas/"+schema) == nil {
			t.Errorf("schema %s missing", schema)
		}
	}
	ids := map[string]string{}
	for path, ops := range doc.Paths {
		for method, o := range ops {
			if prev, ok := ids[o.OperationID]; ok {
				t.Errorf("operationId %q of %s %s is also %s's", o.OperationID, method, path, prev)
			}
			ids[o.OperationID] = method + " " + path
		}
	}
}

func walkJSON(v any, fn func(map[string]any)) {
	switch n := v.(type) {
	case map[string]any:
		fn(n)
		for _, c := range n {
			walkJSON(c, fn)
		}
	case []any:
		for _, c := range n {
			walkJSON(c, fn)
		}
	}
}

// resolveRef follows a local reference ("#/components/schemas/Job").
func resolveRef(tree map[string]any, ref string) any {
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil
	}
	var cur any = tree
	for _, part := range strings.Split(rest, "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
	}
	return cur
}

// TestOpenAPI_Schemas checks the document's schemas name exactly the JSON
// fields of the views the server writes, and mark the always-present
// ones required.
func TestOpenAPI_Schemas(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	_, raw := loadOpenAPI(t, e)
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
				Required   []string       `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{
		"Job":         httpapi.JobView{},
		"Document":    httpapi.DocumentView{},
		"Tenant":      httpapi.TenantView{},
		"APIKey":      httpapi.APIKeyView{},
		"QueueHealth": httpapi.QueueHealthView{},
		"Performance": httpapi.PerformanceView{},
		"Attempt":     httpapi.AttemptView{},
		// The database's health (null parts marshal as null, so every
		// field shows).
		"DatabaseHealth": httpapi.DatabaseHealthView{},
		"HorizonHolder":  httpapi.HorizonHolderView{},
		"Wraparound":     httpapi.WraparoundView{},
		"XIDHolder":      httpapi.XIDHolderView{},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]any
		if err := json.Unmarshal(b, &fields); err != nil {
			t.Fatal(err)
		}
		s := doc.Components.Schemas[name]
		for f := range fields {
			if _, ok := s.Properties[f]; !ok {
				t.Errorf("schema %s lacks field %q", name, f)
			}
			if !slices.Contains(s.Required, f) {
				t.Errorf("schema %s: field %q is always sent but not required", name, f)
			}
		}
		for f := range s.Properties {
			if _, ok := fields[f]; !ok && f != "progress_message" && f != "steps" { // omitempty
				t.Errorf("schema %s has field %q, which the server does not send", name, f)
			}
		}
	}
}
