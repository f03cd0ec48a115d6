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

// SetGroupWriteHook makes s call f on SQLite before it takes the queue of
// creates waiting to write (group.go).
func SetGroupWriteHook(s *Server, f func()) { s.groupWrite = f }

// QueuedWrites returns how many creates wait to write on SQLite.
func QueuedWrites(s *Server) int {
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	return len(s.group.queue)
}
