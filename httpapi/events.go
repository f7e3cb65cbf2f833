package httpapi

// EventSource feeds GET /v1/events. STUB: the feed engineer replaces this
// file.
type EventSource interface{}

// eventRoutes serves server-sent events. STUB.
func (s *Server) eventRoutes() []route { return nil }
