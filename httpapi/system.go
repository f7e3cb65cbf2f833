package httpapi

// systemRoutes serves health, readiness, metrics and the OpenAPI document.
// STUB: replaced by the admin engineer.
func (s *Server) systemRoutes() []route { return nil }
