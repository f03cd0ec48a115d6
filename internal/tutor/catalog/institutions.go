package catalog

import (
	"slices"
	"strings"
)

// Institution is one institution of the directory.
type Institution struct {
	// Key names it in course references ("langara", "sfu", "ubcv").
	Key string `json:"key"`
	// Code is its BC Transfer Guide code ("LANG", "SFU", "UBCV").
	Code string `json:"code"`
	// Name is its full name.
	Name string `json:"name"`
	// Aliases are further names it is known by.
	Aliases []string `json:"aliases,omitempty"`
}

// bctg is the directory of BC Transfer Guide institutions that the shared
// data names: Langara College (the source of every agreement) and the 37
// destinations of its agreements.
var bctg = []Institution{
	{Key: "langara", Code: "LANG", Name: "Langara College", Aliases: []string{"Langara"}},
	{Key: "alex", Code: "ALEX", Name: "Alexander College"},
	{Key: "asm", Code: "ASM", Name: "Acsenda School of Management", Aliases: []string{"Acsenda"}},
	{Key: "au", Code: "AU", Name: "Athabasca University", Aliases: []string{"Athabasca"}},
	{Key: "bcit", Code: "BCIT", Name: "British Columbia Institute of Technology"},
	{Key: "camo", Code: "CAMO", Name: "Camosun College", Aliases: []string{"Camosun"}},
	{Key: "capu", Code: "CAPU", Name: "Capilano University", Aliases: []string{"Capilano"}},
	{Key: "ccc", Code: "CCC", Name: "Corpus Christi College"},
	{Key: "cmtn", Code: "CMTN", Name: "Coast Mountain College"},
	{Key: "cnc", Code: "CNC", Name: "College of New Caledonia"},
	{Key: "colu", Code: "COLU", Name: "Columbia College"},
	{Key: "coqu", Code: "COQU", Name: "Coquitlam College"},
	{Key: "cotr", Code: "COTR", Name: "College of the Rockies"},
	{Key: "doug", Code: "DOUG", Name: "Douglas College", Aliases: []string{"Douglas"}},
	{Key: "ec", Code: "EC", Name: "Emily Carr University of Art + Design", Aliases: []string{"Emily Carr", "ECUAD"}},
	{Key: "fdu", Code: "FDU", Name: "Fairleigh Dickinson University"},
	{Key: "jibc", Code: "JIBC", Name: "Justice Institute of British Columbia"},
	{Key: "kpu", Code: "KPU", Name: "Kwantlen Polytechnic University", Aliases: []string{"Kwantlen"}},
	{Key: "lcv", Code: "LCV", Name: "LaSalle College Vancouver"},
	{Key: "nic", Code: "NIC", Name: "North Island College"},
	{Key: "nlc", Code: "NLC", Name: "Northern Lights College"},
	{Key: "nvit", Code: "NVIT", Name: "Nicola Valley Institute of Technology"},
	{Key: "oc", Code: "OC", Name: "Okanagan College"},
	{Key: "qu", Code: "QU", Name: "Quest University Canada", Aliases: []string{"Quest University"}},
	{Key: "selk", Code: "SELK", Name: "Selkirk College", Aliases: []string{"Selkirk"}},
	{Key: "sfu", Code: "SFU", Name: "Simon Fraser University"},
	{Key: "tru", Code: "TRU", Name: "Thompson Rivers University"},
	{Key: "twu", Code: "TWU", Name: "Trinity Western University"},
	{Key: "ubco", Code: "UBCO", Name: "University of British Columbia Okanagan", Aliases: []string{"UBC Okanagan"}},
	{Key: "ubcv", Code: "UBCV", Name: "University of British Columbia Vancouver", Aliases: []string{"UBC Vancouver", "UBC", "University of British Columbia"}},
	{Key: "ucw", Code: "UCW", Name: "University Canada West"},
	{Key: "ufv", Code: "UFV", Name: "University of the Fraser Valley"},
	{Key: "unbc", Code: "UNBC", Name: "University of Northern British Columbia"},
	{Key: "uvic", Code: "UVIC", Name: "University of Victoria"},
	{Key: "vcc", Code: "VCC", Name: "Vancouver Community College"},
	{Key: "viu", Code: "VIU", Name: "Vancouver Island University"},
	{Key: "yuko", Code: "YUKO", Name: "Yukon University"},
	{Key: "yvu", Code: "YVU", Name: "Yorkville University"},
}

// Directory finds institutions by key, code, name or alias.
type Directory struct {
	list  []Institution
	index map[string]int
}

// NewDirectory returns the directory of the BC Transfer Guide institutions
// plus extra (an extra institution with the key or code of a known one
// replaces it).
func NewDirectory(extra ...Institution) *Directory {
	d := &Directory{index: map[string]int{}}
	for _, in := range append(slices.Clone(bctg), extra...) {
		d.put(in)
	}
	d.reindex()
	return d
}

// Add adds or replaces an institution (matched by key or code).
func (d *Directory) Add(in Institution) {
	d.put(in)
	d.reindex()
}

// put adds or replaces in without reindexing.
func (d *Directory) put(in Institution) {
	// The key is matched against keys and the code against codes only: an
	// institution whose key is another's alias ("ubc" for UBC Vancouver)
	// is a new one, not a replacement.
	i := slices.IndexFunc(d.list, func(x Institution) bool {
		return fold(x.Key) == fold(in.Key) || (in.Code != "" && fold(x.Code) == fold(in.Code))
	})
	if i >= 0 {
		d.list[i] = in
	} else {
		d.list = append(d.list, in)
	}
}

// reindex indexes keys and codes first, then names and aliases, so that
// a key or code always finds its institution even when it is also another
// institution's alias.
func (d *Directory) reindex() {
	d.index = map[string]int{}
	add := func(i int, names ...string) {
		for _, n := range names {
			if k := fold(n); k != "" {
				if _, taken := d.index[k]; !taken {
					d.index[k] = i
				}
			}
		}
	}
	for i, in := range d.list {
		add(i, in.Key, in.Code)
	}
	for i, in := range d.list {
		add(i, append([]string{in.Name}, in.Aliases...)...)
	}
}

// Lookup finds an institution by key, code, name or alias, in any case and
// spacing.
func (d *Directory) Lookup(s string) (Institution, bool) {
	i, ok := d.index[fold(s)]
	if !ok {
		return Institution{}, false
	}
	return d.list[i], true
}

// All lists the institutions, sorted by key.
func (d *Directory) All() []Institution {
	out := slices.Clone(d.list)
	slices.SortFunc(out, func(a, b Institution) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// fold is the lookup form of a name: lower case, single spaces.
func fold(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
