package httpapi

// tenantRoutes serves the tenant API: documents, jobs, search, rate limit.
// STUB: replaced by the API engineer.
func (s *Server) tenantRoutes() []route { return nil }
