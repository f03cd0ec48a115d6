package catalog

import "strings"

// Level is the year level of a course number: its leading digit. Both
// institutions of the shared data number courses so that the first digit
// is the level, whatever the number's length: Langara uses four digits
// (1150 is a first-year course, 2150 second-year), SFU three (120 is
// first-year, the "100 division"; 310 third-year; 500 and above are
// graduate courses, levels 5 to 9), and the BC Transfer Guide's generic
// numbers keep the leading digit ("2XX", "1XXX", "1st" are levels 2, 1
// and 1). A letter suffix ("110W") does not matter. A number that does not
// start with a digit 1 to 9 ("X99", "0999", "") has level 0: unknown.
func Level(number string) int {
	number = strings.TrimSpace(number)
	if number == "" || number[0] < '1' || number[0] > '9' {
		return 0
	}
	return int(number[0] - '0')
}

// LowerDivision says whether a course number is first or second year
// (levels 1 and 2): SFU's lower division, Langara's 1000- and 2000-level
// courses.
func LowerDivision(number string) bool {
	l := Level(number)
	return l == 1 || l == 2
}
