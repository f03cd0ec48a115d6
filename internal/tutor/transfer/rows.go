package transfer

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// rowsFile is the shape of transfers.json.
type rowsFile struct {
	Courses []Row `json:"courses"`
}

// ReadRows reads a BC Transfer Guide export, {"courses": [Row...]}.
func ReadRows(r io.Reader) ([]Row, error) {
	var f rowsFile
	if err := json.NewDecoder(r).Decode(&f); err != nil {
		return nil, fmt.Errorf("transfer rows: %w", err)
	}
	return f.Courses, nil
}

// LoadRows reads the BC Transfer Guide export at path.
func LoadRows(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("transfer rows: %w", err)
	}
	defer f.Close()
	rows, err := ReadRows(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rows, nil
}

// months maps BCTG's month abbreviations to months.
var months = map[string]time.Month{
	"jan": time.January, "feb": time.February, "mar": time.March, "apr": time.April,
	"may": time.May, "jun": time.June, "jul": time.July, "aug": time.August,
	"sep": time.September, "oct": time.October, "nov": time.November, "dec": time.December,
}

// ParseMonth reads a BCTG effective date "Mon/YY" ("May/03") as the first
// day of that month, UTC. Two-digit years 50-99 are 19xx, others 20xx.
// "present" (any case) is the zero time, an open end.
func ParseMonth(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "present") {
		return time.Time{}, nil
	}
	mon, yy, ok := strings.Cut(s, "/")
	m, known := months[strings.ToLower(strings.TrimSpace(mon))]
	if !ok || !known {
		return time.Time{}, fmt.Errorf("effective date %q is not Mon/YY or present", s)
	}
	y, err := strconv.Atoi(strings.TrimSpace(yy))
	if err != nil || y < 0 || y > 99 || len(strings.TrimSpace(yy)) != 2 {
		return time.Time{}, fmt.Errorf("effective date %q: year is not two digits", s)
	}
	if y >= 50 {
		y += 1900
	} else {
		y += 2000
	}
	return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC), nil
}

// ParseEndMonth reads an effective end "Mon/YY" as the last day of that
// month ("Apr/99" is 1999-04-30); "present" is the zero time.
func ParseEndMonth(s string) (time.Time, error) {
	t, err := ParseMonth(s)
	if err != nil || t.IsZero() {
		return t, err
	}
	return t.AddDate(0, 1, -1), nil
}
