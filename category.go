package cryptointel

import "strings"

// EventCategory is an event category in use with its subcategories in use
// (Query.categories, GET /v1/categories/all).
type EventCategory struct {
	// Name is the category, as events carry it (eventCategory).
	Name string `json:"name"`
	// Subcategories are the non-empty subcategories of the category's
	// events, sorted.
	Subcategories []string `json:"subcategories"`
}

// CategoriesPath is the route that lists the categories in use; the
// contract announced it as coming soon.
const CategoriesPath = "/v1/categories/all"

// UnknownCategory is the EINVALID error of a category filter that names no
// category in use: it lists the ones that are, so a typo
// ("partnerships") or a guess is corrected instead of answering an empty
// list.
func UnknownCategory(category string, inUse []string) *Error {
	list := "none"
	if len(inUse) > 0 {
		list = strings.Join(inUse, ", ")
	}
	return Errorf(EINVALID, "unknown category %q: categories in use are %s (their subcategories: GET %s, or the categories query)",
		category, list, CategoriesPath)
}
