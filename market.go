package cryptointel

import (
	"time"

	"github.com/uptrace/bun"
)

// Market is a prediction market about an entity.
type Market struct {
	bun.BaseModel `bun:"table:markets"`

	ID          int64      `bun:"id,pk"`
	EntityID    int64      `bun:"entity_id"`
	Question    string     `bun:"question"`
	URL         string     `bun:"url"`
	Outcomes    []string   `bun:"outcomes,array"`
	Probability *float64   `bun:"probability"`
	Volume      *float64   `bun:"volume"`
	ClosesAt    *time.Time `bun:"closes_at"`
	CreatedAt   time.Time  `bun:"created_at" db:"managed"`
}

// MarketSubevent is a sub-event of a prediction market.
type MarketSubevent struct {
	bun.BaseModel `bun:"table:market_subevents"`

	ID              int64  `bun:"id,pk"`
	MarketID        int64  `bun:"market_id"`
	Label           string `bun:"label"`
	SubeventType    string `bun:"subevent_type"`
	NormalizedTitle string `bun:"normalized_title"`
	InjectedSummary string `bun:"injected_summary"`
}

// MarketPost is a post attached to a market sub-event.
type MarketPost struct {
	bun.BaseModel `bun:"table:market_posts"`

	ID         int64     `bun:"id,pk"`
	SubeventID int64     `bun:"subevent_id"`
	Content    string    `bun:"content"`
	PostedAt   time.Time `bun:"posted_at"`
}
