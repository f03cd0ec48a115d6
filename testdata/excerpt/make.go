//go:build ignore

// make writes the excerpt of the shared data kept in this directory: a few
// hundred real records of each file of ../shared/data (langara/ and sfu/),
// chosen as README.md says, each record as it is in its file.
//
//	go run testdata/excerpt/make.go [SHARED_DATA_DIR]
//
// run from the repository root (the default source is ../shared/data).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
)

// record is the fields of a record the selection looks at.
type record struct {
	Subject     string `json:"subject"`
	Code        int    `json:"course_code"`
	Destination string `json:"destination"`
	Start       string `json:"effective_start"`
	CRN         int    `json:"crn"`
	Dept        string `json:"dept"`
}

func (r record) course() string { return fmt.Sprintf("%s %d", r.Subject, r.Code) }

// transferCourses are the Langara courses all of whose transfer rows are
// kept (the resolution tests read them whole).
var transferCourses = []string{"CPSC 1150", "CPSC 1160", "CPSC 1181", "DSGN 1253", "MATH 2362", "MATH 2382", "AHIS 1111"}

// transferTo are (course, destination) pairs whose rows are kept: those of
// the parser's golden rows (internal/tutor/transfer/golden_test.go) and a
// row the file holds twice (GEOG 1180 to UVIC).
var transferTo = []string{
	"ABST 1100 CAPU", "ABST 1100 UVIC", "ABST 1100 UBCO", "MATH 2485 TWU", "MATH 2485 UBCV", "RECR 3260 TRU", "CHEM 1118 UVIC",
	"ENGL 1100 EC", "FINA 1120 UBCV", "GEOG 1105 OC", "AHIS 1110 EC", "RELS 1220 DOUG", "INTB 3400 SFU", "STAT 1181 SFU",
	"BIOL 1190 UBCO", "AHIS 1315 VCC", "EDAS 1111 YUKO", "AHIS 1119 SFU", "CHEM 1154 SFU", "CHEM 1154 TRU", "PHYS 1125 SFU",
	"ANTH 1500 DOUG", "ASTR 1101 SFU", "ASTR 3310 UBCV", "BIOL 1115 UBCV", "AHIS 1216 SFU", "PSYC 2324 UNBC", "GEOG 1180 UVIC",
	// issue 22: notes read as data, and the or-list of PHYS 1125 or 1225 to SFU.
	"BIOL 2315 UBCV", "BIOL 2315 UBCO", "ENGL 1127 SFU", "ENGL 1128 SFU", "PSYC 1195 UBCV", "BIOL 1111 SFU", "MATH 1174 UNBC", "PHYS 1225 SFU",
}

func main() {
	src := filepath.Join("..", "shared", "data")
	if len(os.Args) > 1 {
		src = os.Args[1]
	}
	out := filepath.Join("testdata", "excerpt")

	// The catalogue: CPSC and MATH, ABST 1100, and every 20th course.
	catalogued := map[string]bool{}
	excerpt(src, out, "langara/catalogue.json", "courses", func(i int, r record) bool {
		keep := r.Subject == "CPSC" || r.Subject == "MATH" || r.course() == "ABST 1100" || i%20 == 0
		catalogued[r.course()] = keep || catalogued[r.course()]
		return keep
	})
	// The attributes of the catalogued courses kept.
	excerpt(src, out, "langara/attributes.json", "attributes", func(_ int, r record) bool { return catalogued[r.course()] })
	// Each term: the CPSC sections, CRN 30852 (ANTH 1120 M01 of 202330) and every 40th section.
	for _, term := range []string{"202310", "202320", "202330"} {
		excerpt(src, out, "langara/"+term+".json", "courses", func(i int, r record) bool {
			return r.Subject == "CPSC" || (term == "202330" && r.CRN == 30852) || i%40 == 0
		})
	}
	// SFU: the CMPT, MACM and ACMA outlines and every 30th.
	excerpt(src, out, "sfu/outlines.json", "data", func(i int, r record) bool {
		return r.Dept == "CMPT" || r.Dept == "MACM" || r.Dept == "ACMA" || i%30 == 0
	})
	// Transfers: as transferCourses and transferTo say, and every 50th row.
	excerpt(src, out, "langara/transfers.json", "courses", func(i int, r record) bool {
		return slices.Contains(transferCourses, r.course()) || slices.Contains(transferTo, r.course()+" "+r.Destination) || i%50 == 0
	})
}

// excerpt writes the records of file's list that keep keeps (by their
// index and fields) to the same path under out, with the file's other
// top-level fields; a total_count is the excerpt's.
func excerpt(src, out, file, list string, keep func(int, record) bool) {
	b, err := os.ReadFile(filepath.Join(src, file))
	if err != nil {
		log.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		log.Fatalf("%s: %v", file, err)
	}
	var recs []json.RawMessage
	if err := json.Unmarshal(top[list], &recs); err != nil {
		log.Fatalf("%s: %v", file, err)
	}
	var kept []json.RawMessage
	for i, raw := range recs {
		var r record
		if err := json.Unmarshal(raw, &r); err != nil {
			log.Fatalf("%s record %d: %v", file, i, err)
		}
		if keep(i, r) {
			kept = append(kept, raw)
		}
	}
	if _, ok := top["total_count"]; ok {
		top["total_count"] = json.RawMessage(fmt.Sprint(len(kept)))
	}
	var w bytes.Buffer
	w.WriteString("{\n")
	for _, k := range sortedKeys(top) {
		if k == list {
			continue
		}
		fmt.Fprintf(&w, "  %q: %s,\n", k, top[k])
	}
	fmt.Fprintf(&w, "  %q: [\n", list)
	for i, raw := range kept {
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			log.Fatal(err)
		}
		w.WriteString("    ")
		w.Write(c.Bytes())
		if i < len(kept)-1 {
			w.WriteByte(',')
		}
		w.WriteByte('\n')
	}
	w.WriteString("  ]\n}\n")
	path := filepath.Join(out, file)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, w.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d of %d records\n", path, len(kept), len(recs))
}

func sortedKeys(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
