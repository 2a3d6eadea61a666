package resolvers

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
)

// categoryListTTL is how long the category list an unknown category's
// message quotes is reused (a category newly met in use refreshes it
// sooner).
const categoryListTTL = time.Minute

// categoryCache remembers, for this process, the event categories seen in
// use, so that a `category` argument costs a statement only the first
// time a name is met, and an unknown one is refused with the list of those
// in use. A name is remembered only once the database confirmed it; the
// refusal itself is always decided by the database, so a category ingested
// a moment ago is never refused.
type categoryCache struct {
	mu     sync.Mutex
	known  map[string]bool
	list   []string
	listAt time.Time
}

// Categories lists the event categories in use with their subcategories.
func (r *queryResolver) Categories(ctx context.Context) ([]*cryptointel.EventCategory, error) {
	return db.EventCategories(ctx, r.store.Reader())
}

// checkCategory refuses a category filter naming no category in use
// (cryptointel.UnknownCategory); nil and "" are no filter.
func (r *Resolver) checkCategory(ctx context.Context, category *string) error {
	if category == nil || *category == "" {
		return nil
	}
	c := &r.categories
	c.mu.Lock()
	ok := c.known[*category]
	c.mu.Unlock()
	if ok {
		return nil
	}
	q := r.store.Reader()
	inUse, err := db.CategoryInUse(ctx, q, *category)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if inUse {
		if c.known == nil {
			c.known = map[string]bool{}
		}
		c.known[*category] = true
		if !slices.Contains(c.list, *category) {
			c.list = nil // a new category: quote a fresh list next time
		}
		return nil
	}
	if c.list == nil || time.Since(c.listAt) > categoryListTTL {
		cats, err := db.EventCategories(ctx, q)
		if err != nil {
			return err
		}
		c.list = make([]string, len(cats))
		for i, cat := range cats {
			c.list[i] = cat.Name
		}
		c.listAt = time.Now()
	}
	return cryptointel.UnknownCategory(*category, c.list)
}
