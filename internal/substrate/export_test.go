package substrate

// SetJudgedHook makes s call f after each create has judged its candidates
// and before its write transaction.
func SetJudgedHook(s *Server, f func()) { s.judged = f }
