package db

import "sync"

// maxMemoTexts bounds a stmtMemo: statement shapes are few (which of a
// route's filters are given, and the selections of its fixed documents:
// a few dozen), and a memo that reaches the bound builds past it without
// keeping, so no client can grow it past this many texts of a few KB.
const maxMemoTexts = 1024

// stmtMemo keeps the text of statements (or parts of them) built from a
// shape K: a shape always builds the same text, so a process builds it
// once instead of once per request. Only shapes are keys, never values:
// values travel as the statement's arguments.
type stmtMemo[K comparable] struct {
	mu sync.RWMutex
	m  map[K]string
}

// text is the text of shape k, built by build the first time.
func (s *stmtMemo[K]) text(k K, build func() string) string {
	s.mu.RLock()
	t, ok := s.m[k]
	s.mu.RUnlock()
	if ok {
		return t
	}
	t = build()
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[K]string)
	}
	if len(s.m) < maxMemoTexts {
		s.m[k] = t
	}
	s.mu.Unlock()
	return t
}
