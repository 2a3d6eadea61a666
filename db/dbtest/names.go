package dbtest

import "strings"

// NameVariants are the names a name-resolution test looks up, given the
// stored names values: each value, its first and last 3, 4 and 6
// characters, its words, two misspellings (a letter dropped, two swapped),
// and names with LIKE's and the regex's metacharacters, an accented name
// and one that matches nothing.
func NameVariants(values []string) map[string]bool {
	names := map[string]bool{}
	for _, n := range []string{"100% yield", "a_b token", `back\slash`, "(x) labs", "s&p 500", "eth.", "labs", "uniswap labs", "ÉTHEREUM", "dao dao", "zzzzqqq"} {
		names[n] = true
	}
	for _, v := range values {
		names[v] = true
		r := []rune(v)
		for _, k := range []int{3, 4, 6} {
			if len(r) > k {
				names[string(r[:k])], names[string(r[len(r)-k:])] = true, true
			}
		}
		for _, w := range strings.Fields(v) {
			names[w] = true
		}
		if len(r) > 4 {
			names[string(r[:2])+string(r[3:])] = true
			s := append([]rune(nil), r...)
			s[1], s[2] = s[2], s[1]
			names[string(s)] = true
		}
	}
	return names
}
