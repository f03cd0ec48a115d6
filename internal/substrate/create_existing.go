package substrate

// Items whose external_id the workspace already holds (belief_create_batch,
// `nexus import beliefs`) are not created again.

import (
	"context"
	"fmt"
)

// skipExisting marks the drafts whose external_id the workspace holds with
// that belief's id, and a draft repeating an earlier draft's external_id
// with the earlier one's.
func (s *Server) skipExisting(ctx context.Context, q querier, workspace string, drafts []*draft) error {
	first := map[string]*draft{}
	var ids []string
	for _, d := range drafts {
		ext := d.nb.externalID
		if ext == "" {
			continue
		}
		if f := first[ext]; f != nil {
			d.existing = f.nb.id
			continue
		}
		first[ext] = d
		ids = append(ids, ext)
	}
	found := map[string]string{}
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		args := []any{workspace}
		for _, id := range chunk {
			args = append(args, id)
		}
		rows, err := q.QueryContext(ctx, s.st.Q(externalQuery(len(chunk))), args...)
		if err != nil {
			return fmt.Errorf("look up external ids: %w", err)
		}
		for rows.Next() {
			var ext, id string
			if err := rows.Scan(&ext, &id); err != nil {
				rows.Close()
				return fmt.Errorf("look up external ids: %w", err)
			}
			found[ext] = id
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("look up external ids: %w", err)
		}
	}
	for _, d := range drafts {
		if id, ok := found[d.nb.externalID]; ok && d.nb.externalID != "" {
			d.existing = id
		}
	}
	return nil
}
