package db

import (
	"context"
	"fmt"

	"github.com/cryptointel/cryptointel"
)

// categoriesSQL lists the (category, subcategory) pairs in use with a loose
// index scan of events_category_subcategory_idx (migration 013): one index
// probe per distinct pair, whatever the number of events, instead of a
// scan and aggregate of the whole table.
const categoriesSQL = `
WITH RECURSIVE pairs AS (
	(SELECT category, subcategory FROM events ORDER BY category, subcategory LIMIT 1)
	UNION ALL
	SELECT n.category, n.subcategory FROM pairs p, LATERAL (
		SELECT e.category, e.subcategory FROM events e
		WHERE (e.category, e.subcategory) > (p.category, p.subcategory)
		ORDER BY e.category, e.subcategory LIMIT 1
	) n
)
SELECT category, subcategory FROM pairs`

// EventCategories returns the event categories in use, sorted, each with
// its non-empty subcategories in use, sorted.
func EventCategories(ctx context.Context, q Querier) ([]*cryptointel.EventCategory, error) {
	rows, err := query(ctx, q, categoriesSQL)
	if err != nil {
		return nil, fmt.Errorf("error listing event categories: %w", err)
	}
	defer rows.Close()
	out := []*cryptointel.EventCategory{}
	for rows.Next() {
		var cat, sub string
		if err := rows.Scan(&cat, &sub); err != nil {
			return nil, fmt.Errorf("error scanning event categories: %w", err)
		}
		if len(out) == 0 || out[len(out)-1].Name != cat {
			out = append(out, &cryptointel.EventCategory{Name: cat, Subcategories: []string{}})
		}
		if sub != "" {
			last := out[len(out)-1]
			last.Subcategories = append(last.Subcategories, sub)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("error listing event categories: %w", err)
	}
	return out, nil
}

// CategoryInUse reports whether any event has category category: one probe
// of events_category_idx.
func CategoryInUse(ctx context.Context, q Querier, category string) (bool, error) {
	rows, err := query(ctx, q, `SELECT EXISTS (SELECT 1 FROM events WHERE category = $1)`, category)
	if err != nil {
		return false, fmt.Errorf("error checking event category: %w", err)
	}
	defer rows.Close()
	var ok bool
	if rows.Next() {
		if err := rows.Scan(&ok); err != nil {
			return false, fmt.Errorf("error checking event category: %w", err)
		}
	}
	return ok, rows.Err()
}
