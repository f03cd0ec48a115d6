package tutor

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/tutor/catalog"
)

// outlinesFile is SFU's outlines (shared data sfu/outlines.json).
type outlinesFile struct {
	Data       []json.RawMessage `json:"data"`
	TotalCount *int              `json:"total_count"`
}

type outlineRow struct {
	Dept           string     `json:"dept"`
	Number         flexText   `json:"number"`
	Title          string     `json:"title"`
	Units          flexText   `json:"units"`
	Description    string     `json:"description"`
	Notes          string     `json:"notes"`
	Designation    string     `json:"designation"`
	DeliveryMethod string     `json:"deliveryMethod"`
	DegreeLevel    string     `json:"degreeLevel"`
	Prerequisites  string     `json:"prerequisites"`
	Corequisites   string     `json:"corequisites"`
	Offerings      []offering `json:"offerings"`
}

type offering struct {
	Term        string   `json:"term"`
	Instructors []string `json:"instructors"`
}

// importOutlines stores SFU's outlines as courses at sfu: dept and number,
// title, units as credits, description, notes, designation ("N/A" is
// none), delivery method, degree level, prerequisite and corequisite
// texts, and the offerings (term as given, "Fall 2024", with its
// instructors). What other imports merged into a course is kept.
func (s *Server) importOutlines(ctx context.Context, tx *sql.Tx, f *outlinesFile, source string, run *fileRun) error {
	courses, err := s.coursesTx(ctx, tx, "sfu")
	if err != nil {
		return err
	}
	for i, raw := range f.Data {
		row := i + 1
		var r outlineRow
		if err := json.Unmarshal(raw, &r); err != nil {
			run.notParsed(row, "", "record does not decode", err.Error())
			continue
		}
		subj, num, err := catalog.SplitCode(r.Dept + " " + string(r.Number))
		if err != nil {
			run.notParsed(row, "", "no valid dept and number", err.Error())
			continue
		}
		ref := catalog.Ref{Institution: "sfu", Subject: subj, Number: num}
		c := courses.start(ref, source)
		c.Title, c.Description, c.Source = strings.TrimSpace(r.Title), strings.TrimSpace(r.Description), source
		c.Credits = nil
		if u := strings.TrimSpace(string(r.Units)); u != "" {
			v, err := strconv.ParseFloat(u, 64)
			if err != nil {
				run.problem(row, ref.String(), "units are not a number; stored without credits", fmt.Sprintf("units %q", u))
			} else {
				c.Credits = &v
			}
		}
		d := &c.Details
		d.Notes = strings.TrimSpace(r.Notes)
		d.Designation = strings.TrimSpace(r.Designation)
		if strings.EqualFold(d.Designation, "N/A") {
			d.Designation = ""
		}
		d.DeliveryMethod, d.DegreeLevel = strings.TrimSpace(r.DeliveryMethod), strings.TrimSpace(r.DegreeLevel)
		d.Prerequisites, d.Corequisites = strings.TrimSpace(r.Prerequisites), strings.TrimSpace(r.Corequisites)
		d.Offerings = nil
		for _, o := range r.Offerings {
			names := []string{}
			for _, n := range o.Instructors {
				if n = strings.TrimSpace(n); n != "" {
					names = append(names, n)
				}
			}
			d.Offerings = append(d.Offerings, Offering{Term: strings.TrimSpace(o.Term), Instructors: names})
		}
		ch, err := courses.put(ctx, s, tx, c)
		if err != nil {
			return fmt.Errorf("row %d: %w", row, err)
		}
		run.count(ch)
		run.rowDone()
	}
	return nil
}
