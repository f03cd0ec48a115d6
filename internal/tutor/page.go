package tutor

import (
	"github.com/nexus-mcp/nexus/internal/errs"
)

// Pagination (ADR-012): list tools take limit (default 20, at most 100) and
// an opaque cursor, and answer {items, nextCursor, totalCount, hasMore}.
const (
	// DefaultLimit is a page's size when the caller gives none.
	DefaultLimit = 20
	// MaxLimit is the largest page.
	MaxLimit = 100
)

// Page is one page of a list tool's answer.
type Page[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"nextCursor,omitempty"`
	TotalCount int    `json:"totalCount"`
	HasMore    bool   `json:"hasMore"`
}

// window reads a page request of tool: the offset the cursor points at (0
// without one) and the page size. The cursor is bound to tool and scope
// (the query's filters), so one issued for another query, or altered, is a
// BAD_REQUEST naming it.
func (s *Server) window(tool string, limit int, cur string, scope ...string) (offset, size int, err error) {
	if limit == 0 {
		limit = DefaultLimit
	}
	if limit < 1 || limit > MaxLimit {
		return 0, 0, errs.Invalid("limit", "must be between 1 and %d, got %d", MaxLimit, limit)
	}
	if cur == "" {
		return 0, limit, nil
	}
	pos, err := s.cursor.Decode(cur, append([]string{tool}, scope...)...)
	if err != nil {
		return 0, 0, errs.Invalid("cursor", "%s", err)
	}
	return int(pos), limit, nil
}

// page cuts the page at offset from all (every item of the query, in order)
// and signs the cursor of the next page.
func page[T any](s *Server, all []T, offset, size int, tool string, scope ...string) Page[T] {
	p := Page[T]{Items: []T{}, TotalCount: len(all)}
	if offset < len(all) {
		end := min(offset+size, len(all))
		p.Items = all[offset:end]
		if end < len(all) {
			p.HasMore = true
			p.NextCursor = s.cursor.Encode(int64(end), append([]string{tool}, scope...)...)
		}
	}
	return p
}

// counted is a page whose items were read from the store at offset, with
// the query's total counted there.
func counted[T any](s *Server, items []T, total, offset, size int, tool string, scope ...string) Page[T] {
	p := Page[T]{Items: items, TotalCount: total}
	if p.Items == nil {
		p.Items = []T{}
	}
	if end := offset + len(items); end < total && len(items) == size {
		p.HasMore = true
		p.NextCursor = s.cursor.Encode(int64(end), append([]string{tool}, scope...)...)
	}
	return p
}
