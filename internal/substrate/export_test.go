package substrate

// SetJudgedHook makes s call f after each create has judged its candidates
// and before its write transaction.
func SetJudgedHook(s *Server, f func()) { s.judged = f }

// LargestWriteGroup returns the most creates s has written in one
// transaction (group.go).
func LargestWriteGroup(s *Server) int {
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	return s.group.largest
}
