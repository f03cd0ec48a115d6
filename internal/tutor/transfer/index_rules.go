package transfer

import "iter"

// Rules yields the rules the index holds (each agreement once, duplicates
// listed under several courses removed), in the order given to NewIndex.
// The rules are the index's own: read only.
func (ix *Index) Rules() iter.Seq[*Rule] {
	return func(yield func(*Rule) bool) {
		for _, c := range ix.comp {
			if !yield(&ix.rules[c.rule]) {
				return
			}
		}
	}
}
