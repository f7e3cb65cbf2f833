package httpapi

// adminRoutes serves /v1/admin/*. STUB: replaced by the admin engineer.
func (s *Server) adminRoutes() []route { return nil }
