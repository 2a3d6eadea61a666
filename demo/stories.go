package demo

import (
	"math/rand/v2"
	"time"
)

// The stories of the demo world: what happens to whom, told in several
// phrasings. A happening is reported by one to five sources (each report
// an event in its own words, its evidence posts in yet other words);
// some start a storyline whose next steps follow days or weeks later (a
// hack, the freeze of the stolen funds, the post-mortem, the refunds; a
// proposal, its vote, the upgrade it schedules and its activation); some
// announce a date ahead (unlocks, upgrades, votes, hearings).
//
// Placeholders: {O} owner, {P} first participant, {T} owner ticker, {Q}
// participant ticker, {N} a number, {F} a feature, {C} a component, {U}
// an upgrade name, {K} a chain component, {H} the chain the owner is built on, {D} the date the
// storyline set ahead, {S} the source of a report.

// storySub is one kind of happening.
type storySub struct {
	cat, name string
	// key names the kind for storylines when two kinds share a
	// subcategory (name by default).
	key string
	// weight is the relative frequency of fresh happenings of this kind
	// within its category (0: only as a storyline's step).
	weight int
	// cast picks who it happens to; false when the world has nobody for
	// it (the generator then picks again).
	cast func(g *seedGen, rng *rand.Rand) (owner *seedEntity, parts []*seedEntity, ok bool)
	// titles are its phrasings, as headlines.
	titles []string
	// bullets are facts a report lists.
	bullets []string
	// next are the storyline's next steps.
	next []storyStep
	// single: one report only (research, interviews).
	single bool
	// ahead sets {D} to a date this far ahead (a scheduled event), ±half.
	ahead time.Duration
}

// storyStep is a storyline's next step: the happening sub, after about
// after (±half), with probability prob.
type storyStep struct {
	sub   string
	after time.Duration
	prob  float64
}

const day = 24 * time.Hour

// Category weights of fresh happenings.
var storyCategoryWeights = map[string]int{
	"partnership": 15, "funding": 12, "listing": 13, "technology": 18, "security": 6, "regulation": 7,
	"analysis": 10, "governance": 6, "media": 5, "tokenomics": 6,
}

// Casts.

func castOne(pool func(w *world) []*seedEntity) func(g *seedGen, rng *rand.Rand) (*seedEntity, []*seedEntity, bool) {
	return func(g *seedGen, rng *rand.Rand) (*seedEntity, []*seedEntity, bool) {
		p := pool(g.world)
		if len(p) == 0 {
			return nil, nil, false
		}
		return pick(rng, p), nil, true
	}
}

func hosts(w *world) []*seedEntity      { return w.hosts }
func apps(w *world) []*seedEntity       { return w.apps }
func unlockable(w *world) []*seedEntity { return w.unlockable }
func anyProject(w *world) []*seedEntity { return w.all }
func governed(w *world) []*seedEntity   { return w.governed }

// castListing: a project and an exchange it is listed on.
func castListing(g *seedGen, rng *rand.Rand) (*seedEntity, []*seedEntity, bool) {
	p := pickPair(rng, g.world.listings)
	return p.a, []*seedEntity{p.b}, true
}

// castRound: a project and a fund invested in it (sometimes two).
func castRound(g *seedGen, rng *rand.Rand) (*seedEntity, []*seedEntity, bool) {
	p := g.world.investments[rng.IntN(len(g.world.investments))]
	parts := []*seedEntity{p.a}
	for _, q := range g.world.investorsOf[p.b] {
		if q != p.a && rng.Float64() < 0.25 {
			parts = append(parts, q)
			break
		}
	}
	return p.b, parts, true
}

// castInvestment: a fund and a project it invested in.
func castInvestment(g *seedGen, rng *rand.Rand) (*seedEntity, []*seedEntity, bool) {
	p := g.world.investments[rng.IntN(len(g.world.investments))]
	return p.a, []*seedEntity{p.b}, true
}

// castGrant: a foundation and an application on its chain.
func castGrant(g *seedGen, rng *rand.Rand) (*seedEntity, []*seedEntity, bool) {
	chain := pick(rng, g.world.hosts)
	f := g.world.foundationOf[chain]
	apps := g.world.builtOn[chain]
	if f == nil || len(apps) == 0 {
		return nil, nil, false
	}
	return f, []*seedEntity{apps[rng.IntN(len(apps))]}, true
}

// castFoundation: a foundation, about its own chain.
func castFoundation(g *seedGen, rng *rand.Rand) (*seedEntity, []*seedEntity, bool) {
	chain := pick(rng, g.world.hosts)
	f := g.world.foundationOf[chain]
	if f == nil {
		return nil, nil, false
	}
	return f, []*seedEntity{chain}, true
}

// castPartners: two partner applications.
func castPartners(g *seedGen, rng *rand.Rand) (*seedEntity, []*seedEntity, bool) {
	p := pickPair(rng, g.world.partners)
	return p.a, []*seedEntity{p.b}, true
}

// castChainApp: a chain and an application that launches on it.
func castChainApp(g *seedGen, rng *rand.Rand) (*seedEntity, []*seedEntity, bool) {
	chain := pick(rng, g.world.hosts)
	apps := g.world.builtOn[chain]
	if len(apps) == 0 {
		return nil, nil, false
	}
	return chain, []*seedEntity{apps[rng.IntN(len(apps))]}, true
}

// castAcquisition: a named application buys a young one.
func castAcquisition(g *seedGen, rng *rand.Rand) (*seedEntity, []*seedEntity, bool) {
	var named, young []*seedEntity
	for _, a := range g.world.apps {
		if a.named {
			named = append(named, a)
		} else {
			young = append(young, a)
		}
	}
	if len(named) == 0 || len(young) == 0 {
		return nil, nil, false
	}
	return pick(rng, named), []*seedEntity{young[rng.IntN(len(young))]}, true
}

// castExchangeProject: a listed project and its exchange, the exchange
// first (an alliance).
func castExchangeProject(g *seedGen, rng *rand.Rand) (*seedEntity, []*seedEntity, bool) {
	p := pickPair(rng, g.world.listings)
	return p.b, []*seedEntity{p.a}, true
}

// castRegulated: an exchange or stablecoin issuer and a regulator of it.
func castRegulated(g *seedGen, rng *rand.Rand) (*seedEntity, []*seedEntity, bool) {
	p := pickPair(rng, g.world.regulation)
	return p.b, []*seedEntity{p.a}, true
}

// castExchangeOnly: an exchange, popular or not.
func castExchangeOnly(g *seedGen, rng *rand.Rand) (*seedEntity, []*seedEntity, bool) {
	return g.world.exchanges[rng.IntN(len(g.world.exchanges))], nil, true
}

// castETF: an asset a spot fund is filed for and the regulator.
func castETF(g *seedGen, rng *rand.Rand) (*seedEntity, []*seedEntity, bool) {
	a := pick(rng, g.world.etf)
	r := g.world.etfRegulators[int(float64(len(g.world.etfRegulators))*rng.Float64()*rng.Float64())]
	return a, []*seedEntity{r}, true
}

// castOutage: a chain or a rollup.
func castOutage(g *seedGen, rng *rand.Rand) (*seedEntity, []*seedEntity, bool) {
	return pick(rng, g.world.hosts), nil, true
}

// castStable: a stablecoin, any of them.
func castStable(g *seedGen, rng *rand.Rand) (*seedEntity, []*seedEntity, bool) {
	return g.world.stables[rng.IntN(len(g.world.stables))], nil, true
}

// storySubs are every kind of happening.
var storySubs = []*storySub{
	// Partnerships.
	{cat: "partnership", name: "integration", weight: 5, cast: castChainApp,
		titles: []string{"{P} goes live on {O}", "{P} launches on {O} with support for {F}", "{P} deploys to {O} mainnet",
			"{O} welcomes {P} to its ecosystem", "{P} expands to {O}"},
		bullets: []string{"Deployment covers {F}", "Users can bridge assets from day one", "{O} incentives support the launch", "Contracts were audited before deployment"}},
	{cat: "partnership", name: "collaboration", weight: 5, cast: castPartners,
		titles: []string{"{O} partners with {P} on {F}", "{O} and {P} team up to build {F}", "{O} and {P} announce partnership",
			"{P} joins forces with {O} for {F}", "{O} integrates {P} for {F}"},
		bullets: []string{"The partnership targets {F}", "Rollout planned in phases over the coming weeks", "{T} holders are not required to take action", "Both teams will share engineering resources"}},
	{cat: "partnership", name: "acquisition", weight: 2, cast: castAcquisition,
		titles: []string{"{O} acquires {P}", "{O} agrees to buy {P} in all-token deal", "{O} snaps up {P} team to accelerate {F}",
			"{P} to be absorbed by {O} after acquisition", "{O} completes takeover of {P}"},
		bullets: []string{"Deal terms were not disclosed", "The {P} team joins {O}", "{P} products will be folded into {O}", "Closing expected within weeks"}},
	{cat: "partnership", name: "strategic_alliance", weight: 3, cast: castExchangeProject,
		titles: []string{"{O} and {P} launch joint {F} program", "{O} forms strategic alliance with {P}", "{O} teams up with {P} on {F}",
			"{P} and {O} sign strategic partnership"},
		bullets: []string{"The program starts with {F}", "Eligible users get reduced fees", "The alliance runs for one year", "Both teams will share engineering resources"}},

	// Funding.
	{cat: "funding", name: "seed_round", weight: 4, cast: castRound,
		titles: []string{"{O} raises ${N}M seed round led by {P}", "{P} leads ${N}M seed investment in {O}", "{O} secures ${N}M in seed funding from {P}",
			"{O} lands ${N}M seed round with backing from {P}", "{P}-backed {O} closes ${N}M seed"},
		bullets: []string{"Round size: ${N}M", "Funds earmarked for {F}", "Valuation was not disclosed", "Hiring plans include protocol engineers"}},
	{cat: "funding", name: "series_a", weight: 3, cast: castRound,
		titles: []string{"{O} closes ${N}M Series A with {P}", "{O} raises ${N}M Series A led by {P}", "{P} leads ${N}M Series A in {O}",
			"{O} secures ${N}M in Series A funding", "{O} bags ${N}M in fresh funding from {P}"},
		bullets: []string{"Round size: ${N}M", "Funds earmarked for {F}", "Existing investors participated", "The team plans to double headcount"}},
	{cat: "funding", name: "grants", weight: 3, cast: castGrant,
		titles: []string{"{O} awards ${N}M grant to {P}", "{P} wins ${N}M grant from {O}", "{O} funds {P} with ${N}M ecosystem grant",
			"{O} backs {P} through its grant program"},
		bullets: []string{"Grant size: ${N}M", "The grant funds {F}", "Milestones are paid out over a year", "The grant program reopens next quarter"}},
	{cat: "funding", name: "strategic_investment", weight: 2, cast: castInvestment,
		titles: []string{"{O} makes strategic investment in {P}", "{O} backs {P} to expand {F}", "{P} receives strategic investment from {O}",
			"{O} takes stake in {P}"},
		bullets: []string{"Investment size was not disclosed", "The investment supports {F}", "{O} gets a board observer seat", "Existing investors participated"}},

	// Listings.
	{cat: "listing", name: "spot_listing", weight: 6, cast: castListing,
		titles: []string{"{P} lists {O} ({T}) for spot trading", "{T} spot trading opens on {P}", "{P} adds {O} ({T}) to its spot market",
			"{O} debuts on {P} with {T}/USDT pair", "{P} to list {T} tokens", "{T} now tradable on {P}"},
		bullets: []string{"Trading pairs: {T}/USDT and {T}/USD", "Deposits open ahead of trading", "Withdrawals follow one day later", "Liquidity incentives run for 30 days"}},
	{cat: "listing", name: "futures_listing", weight: 4, cast: castListing,
		titles: []string{"{P} launches {T} perpetual futures", "{P} adds {T} margin and futures pairs", "{T} perpetual swaps go live on {P}",
			"{P} lists {T}-margined perpetual contracts", "{P} opens {T} derivatives trading"},
		bullets: []string{"Leverage up to 20x", "Contracts settle in USDT", "Funding rates update every eight hours", "Position limits apply at launch"}},
	{cat: "listing", name: "delisting", weight: 2, cast: castListing,
		titles: []string{"{P} to delist {T} trading pairs", "{P} announces removal of {O} ({T}) markets", "{P} drops {T} from its exchange",
			"{T} delisted from {P}", "{P} will suspend {T} trading"},
		bullets: []string{"Trading stops at the end of the month", "Withdrawals remain open for 90 days", "The exchange cited low liquidity", "Open orders will be cancelled"}},

	// Technology.
	{cat: "technology", name: "mainnet_launch", weight: 2, cast: castOne(apps),
		titles:  []string{"{O} mainnet goes live", "{O} launches mainnet with {F}", "{O} flips the switch on mainnet", "{O} mainnet is now live on {H}"},
		bullets: []string{"The launch enables {F}", "Early users receive points", "The testnet ran for six months", "Audits completed ahead of launch"}},
	{cat: "technology", name: "upgrade", weight: 4, cast: castOne(hosts), ahead: 8 * day,
		titles: []string{"{O} schedules {U} network upgrade for {D}", "{O} sets {D} date for {U} hard fork", "{U} upgrade to hit {O} mainnet on {D}",
			"{O} developers target {D} for {U} activation", "{O} confirms {U} upgrade timeline"},
		bullets: []string{"Upgrade introduces {F}", "Node operators must update before activation", "Testnets already run the release", "Activation is set for {D}"},
		next:    []storyStep{{"upgrade_activated", 8 * day, 0.9}}},
	{cat: "technology", name: "upgrade_activated", cast: castOne(hosts),
		titles:  []string{"{O} activates {U} upgrade", "{U} hard fork goes live on {O}", "{O} completes {U} network upgrade", "{O} ships {U} upgrade on mainnet"},
		bullets: []string{"Upgrade introduces {F}", "Validators upgraded ahead of activation", "The fork went smoothly", "Fees fell after the upgrade"}},
	{cat: "technology", name: "testnet", weight: 3, cast: castOne(hosts),
		titles:  []string{"{O} opens public testnet for {F}", "{O} testnet adds {F}", "{O} launches incentivized testnet", "Developers can now test {F} on {O} testnet"},
		bullets: []string{"Testnet runs for eight weeks", "Bug bounties cover the testnet", "Faucets are open to developers", "Mainnet release depends on results"}},
	{cat: "technology", name: "protocol_release", weight: 4, cast: castOne(anyProject),
		titles:  []string{"{O} releases v{N}.0 client", "{O} ships {F} in latest release", "{O} v{N} release brings {F}", "New {O} release adds {F}"},
		bullets: []string{"Release introduces {F}", "Backward-compatible with existing tooling", "Throughput improvements reported in testing", "Node operators are encouraged to update"}},
	{cat: "technology", name: "outage", weight: 2, cast: castOutage,
		titles: []string{"{O} suffers outage as block production halts", "{O} network goes down for {N} minutes", "{O} halts after consensus bug",
			"Transactions stuck as {O} stalls", "{O} downtime: validators stop producing blocks", "{O} hit by hours-long outage",
			"{O} experiences degraded performance, transactions delayed"},
		bullets: []string{"Block production stopped for {N} minutes", "Validators coordinated a restart", "User funds were not affected", "A post-mortem will follow"},
		next:    []storyStep{{"outage_resolved", 8 * time.Hour, 0.8}}},
	{cat: "technology", name: "outage", key: "exchange_outage", weight: 1, cast: castExchangeOnly,
		titles: []string{"{O} suffers outage, trading halted", "{O} goes down during volatile trading", "{O} users locked out as exchange hits downtime",
			"{O} halts trading after matching engine failure", "{O} experiences degraded service, withdrawals delayed"},
		bullets: []string{"Trading was halted for {N} minutes", "Withdrawals were delayed", "User funds were not affected", "The exchange will compensate affected traders"},
		next:    []storyStep{{"exchange_outage_resolved", 6 * time.Hour, 0.8}}},
	{cat: "technology", name: "outage_resolved", key: "exchange_outage_resolved", cast: castExchangeOnly,
		titles:  []string{"{O} restores trading after outage", "{O} back online after downtime", "{O} reopens trading, blames matching engine bug"},
		bullets: []string{"Service is fully restored", "Open orders were honoured", "The exchange will compensate affected traders", "A post-mortem will follow"}},
	{cat: "technology", name: "outage_resolved", cast: castOutage,
		titles: []string{"{O} restores service after outage", "{O} back online after downtime", "{O} resumes block production after halt",
			"{O} post-mortem blames {K} bug for outage"},
		bullets: []string{"Service is fully restored", "The root cause was a bug in the {K}", "A patch has been released", "Users are advised to retry stuck transactions"}},

	// Security.
	{cat: "security", name: "exploit", weight: 3, cast: castOne(apps),
		titles: []string{"{O} suffers ${N}M exploit in {C}", "Attacker drains ${N}M from {O} {C}", "{O} hacked: ${N}M stolen from {C}",
			"Hackers steal ${N}M from {O}", "{O} loses ${N}M in {C} breach", "{O} {C} compromised, ${N}M siphoned", "${N}M drained from {O} in flash loan attack"},
		bullets: []string{"Affected component: {C}", "Funds at risk estimated at ${N}M", "Contracts paused as a precaution", "The attacker bridged funds to Ethereum"},
		next:    []storyStep{{"funds_frozen", 10 * time.Hour, 0.6}, {"post_mortem", 3 * day, 0.8}, {"recovery", 9 * day, 0.5}}},
	{cat: "security", name: "exchange_hack", weight: 2, cast: castExchangeOnly,
		titles: []string{"{O} hot wallet drained of ${N}M", "{O} hacked, ${N}M in crypto stolen", "Hackers breach {O} and steal ${N}M",
			"{O} suspends withdrawals after ${N}M hack", "{O} confirms security breach, ${N}M lost"},
		bullets: []string{"Withdrawals are suspended", "Cold wallets were not affected", "The exchange will cover user losses", "Stolen funds were moved through mixers"},
		next:    []storyStep{{"withdrawals_resume", 2 * day, 0.8}, {"probe", 8 * day, 0.6}}},
	{cat: "security", name: "funds_frozen", cast: castOne(apps),
		titles: []string{"{P} froze ${N}M of stolen funds linked to {O} breach", "{O} exploit: {P} freezes attacker deposits",
			"{P} blocks hacker's deposits after {O} attack", "Part of {O} loot frozen by {P}"},
		bullets: []string{"The attacker deposited stolen funds", "Frozen funds will be returned", "Investigators traced the deposits", "The freeze covers ${N}M"}},
	{cat: "security", name: "post_mortem", cast: castOne(apps),
		titles: []string{"{O} publishes post-mortem of ${N}M {C} exploit", "{O} explains how attacker abused {C}", "Root cause of {O} hack traced to {C}",
			"{O} incident report: {C} bug let attacker drain funds"},
		bullets: []string{"The bug was in the {C}", "A fix is deployed", "An external audit is under way", "The team apologized to users"}},
	{cat: "security", name: "recovery", cast: castOne(apps),
		titles: []string{"{O} unveils plan to reimburse hack victims", "{O} to repay users after exploit", "{O} recovers part of stolen funds",
			"{O} hacker returns funds after bounty offer"},
		bullets: []string{"Users will be repaid in {T}", "A 10% bounty was offered", "Repayments start next month", "The treasury covers the shortfall"}},
	{cat: "security", name: "withdrawals_resume", cast: castExchangeOnly,
		titles:  []string{"{O} resumes withdrawals after hack", "{O} reopens withdrawals, says users are made whole", "Withdrawals back on {O} after security breach"},
		bullets: []string{"All balances are covered", "New wallet infrastructure was deployed", "Some tokens remain suspended", "Users should rotate API keys"}},
	{cat: "security", name: "vulnerability_disclosure", weight: 2, cast: castOne(anyProject),
		titles: []string{"{O} patches critical bug in {C}", "Researchers disclose {C} vulnerability in {O}", "{O} fixes flaw that put funds at risk",
			"White hat finds critical {C} bug in {O}"},
		bullets: []string{"Affected component: {C}", "No funds were lost", "Bug bounty paid to the reporter", "Users should update their nodes"}},
	{cat: "security", name: "audit", weight: 2, cast: castOne(apps),
		titles: []string{"{O} completes security audit of {C}", "{O} publishes {C} audit results", "Auditors review {O} {C} ahead of launch",
			"{O} passes third-party security review"},
		bullets: []string{"Audit found no critical issues", "Two medium findings were fixed", "The report is public", "A second review is planned"}},

	// Regulation.
	{cat: "regulation", name: "enforcement_action", weight: 2, cast: castRegulated,
		titles: []string{"{P} fines {O} ${N}M over compliance failures", "{P} takes enforcement action against {O}", "{O} to pay ${N}M penalty to {P}",
			"{P} charges {O} with operating without registration", "{P} hits {O} with ${N}M fine"},
		bullets: []string{"Penalty of ${N}M announced", "The firm neither admits nor denies the findings", "Compliance monitor appointed", "Company says it will cooperate"}},
	{cat: "regulation", name: "probe", cast: castRegulated,
		titles:  []string{"{P} opens probe into {O}", "{P} investigates {O} after security breach", "{O} under investigation by {P}"},
		bullets: []string{"The regulator requested documents", "No charges have been filed", "The firm says it is cooperating", "The probe covers customer protection"}},
	{cat: "regulation", name: "license_granted", weight: 2, cast: castRegulated,
		titles: []string{"{O} secures license from {P}", "{P} grants {O} registration to operate", "{O} wins regulatory approval from {P}",
			"{P} approves {O} license application"},
		bullets: []string{"The license covers custody and trading", "Services launch next quarter", "The approval took two years", "Local users can onboard now"}},
	{cat: "regulation", name: "lawsuit", weight: 2, cast: castRegulated,
		titles: []string{"{P} sues {O}", "{P} files lawsuit against {O}", "{O} hit with lawsuit from {P}", "{P} takes {O} to court over unregistered securities",
			"{P} complaint accuses {O} of securities violations"},
		bullets: []string{"The complaint was filed in federal court", "The regulator seeks penalties and an injunction", "The firm says it will fight the charges", "Users' funds are not affected"},
		next:    []storyStep{{"hearing", 9 * day, 0.7}, {"settlement", 18 * day, 0.5}}},
	{cat: "regulation", name: "hearing", cast: castRegulated, ahead: 4 * day,
		titles:  []string{"Court sets {D} hearing in {P} case against {O}", "{O} moves to dismiss {P} lawsuit", "Judge schedules {D} hearing on {P} suit against {O}"},
		bullets: []string{"The hearing is set for {D}", "Both sides filed briefs", "A ruling could follow within weeks", "Amicus briefs support the firm"}},
	{cat: "regulation", name: "settlement", cast: castRegulated,
		titles:  []string{"{O} settles with {P} for ${N}M", "{P} and {O} reach ${N}M settlement", "{O} agrees to ${N}M settlement ending {P} case"},
		bullets: []string{"The settlement ends the case", "The firm pays ${N}M", "No admission of wrongdoing", "Compliance changes are required"}},
	{cat: "regulation", name: "etf_filing", weight: 1, cast: castETF,
		titles:  []string{"Asset managers file for spot {T} ETF with {P}", "Spot {O} exchange-traded fund application lands at {P}", "{P} receives filings for first {T} ETFs"},
		bullets: []string{"Several issuers filed", "A decision is due within 240 days", "Fees range from 0.2% to 0.9%", "Custody would be provided by a bank"},
		next:    []storyStep{{"etf_approval", 16 * day, 0.6}}},
	{cat: "regulation", name: "etf_approval", weight: 1, cast: castETF,
		titles: []string{"{P} clears spot {T} exchange-traded fund", "{P} greenlights first {O} ETF listings", "{P} approves spot {O} ETFs",
			"Spot {T} ETFs win approval from {P}", "{O} funds approved: {P} gives nod to spot {T} ETF"},
		bullets: []string{"Trading starts within days", "Eleven issuers were approved", "Decision follows a multi-year review", "Inflows are expected to be large"}},
	{cat: "regulation", name: "policy_statement", weight: 1, cast: castRegulated,
		titles:  []string{"{P} issues guidance affecting {O}", "{P} statement clarifies rules for {O}", "{P} publishes new rules that apply to {O}"},
		bullets: []string{"Guidance applies to {F}", "Compliance deadline set for next quarter", "Comments are open for 60 days", "The rules take effect next year"}},

	// Analysis.
	{cat: "analysis", name: "research_report", weight: 3, cast: castOne(anyProject), single: true,
		titles:  []string{"Research: {O} network activity and fee trends", "Deep dive: {O} and the economics of {F}", "Report: how {O} captures value from {F}"},
		bullets: []string{"Active addresses up {N}% month over month", "Fee revenue concentrated in {F}", "Methodology uses public on-chain data", "Holder distribution remains concentrated"}},
	{cat: "analysis", name: "market_analysis", weight: 4, cast: castOne(anyProject), single: true,
		titles: []string{"{T} market structure after recent volatility", "Analysts weigh {T} outlook as {F} gains traction", "{T} price: what traders watch this week",
			"Why {T} outperformed the market"},
		bullets: []string{"Open interest rose {N}%", "Funding rates turned positive", "Spot volumes lag derivatives", "Options skew favours calls"}},
	{cat: "analysis", name: "onchain_analysis", weight: 3, cast: castOne(anyProject), single: true,
		titles:  []string{"On-chain data shows {O} whale accumulation", "{T} exchange outflows hit multi-month high", "Large {T} holders keep buying, on-chain data shows"},
		bullets: []string{"Exchange balances declining", "Whale wallets added {N}M {T}", "Active addresses up {N}% month over month", "Methodology uses public on-chain data"}},

	// Governance.
	{cat: "governance", name: "proposal", weight: 4, cast: castOne(governed), ahead: 5 * day,
		titles: []string{"{O} DAO proposes changes to {F}", "{O} community debates {U} proposal", "New {O} governance proposal would fund {F}",
			"{O} proposal to overhaul {F} heads to vote on {D}"},
		bullets: []string{"Voting closes on {D}", "Treasury allocation of ${N}M requested", "Delegates split on the proposal", "Changes take effect after a timelock"},
		next:    []storyStep{{"vote_result", 5 * day, 0.9}}},
	{cat: "governance", name: "vote_result", cast: castOne(governed),
		titles: []string{"{O} governance approves {F} proposal", "{O} token holders pass {U} proposal", "{O} DAO vote backs {F} overhaul",
			"{O} token holders reject {U} proposal", "{O} governance vote passes {U} proposal"},
		bullets: []string{"Quorum reached with {N}% participation", "Changes take effect after a timelock", "The vote was closer than expected", "Large delegates voted in favour"}},
	{cat: "governance", name: "foundation_governance", weight: 2, cast: castFoundation,
		titles:  []string{"{O} proposes {U} roadmap for {P}", "{O} opens community vote on {P} treasury", "{O} restructures {P} governance council"},
		bullets: []string{"The council gains {N} seats", "Token holders vote next week", "The treasury holds ${N}M", "Elections run every six months"}},

	// Media.
	{cat: "media", name: "media_content", weight: 2, cast: castOne(anyProject), single: true,
		titles:  []string{"Video: {O} founders on the road ahead", "Explainer: how {O} approaches {F}"},
		bullets: []string{"Runs about {N} minutes", "Discussion covers {F}", "Roadmap items for next year mentioned"}},
	{cat: "media", name: "interview", weight: 2, cast: castOne(anyProject), single: true,
		titles:  []string{"Interview: {O} core developer on {F}", "{O} lead talks {U} upgrade in interview"},
		bullets: []string{"Discussion covers {F}", "Roadmap items for next year mentioned", "Audience questions answered live"}},
	{cat: "media", name: "podcast", weight: 1, cast: castOne(anyProject), single: true,
		titles:  []string{"Podcast: what {O}'s {F} means for users", "Podcast episode covers {T} ecosystem growth"},
		bullets: []string{"Episode runs about {N} minutes", "Discussion covers {F}", "Audience questions answered live"}},

	// Tokenomics.
	{cat: "tokenomics", name: "token_unlock", weight: 3, cast: castOne(unlockable), ahead: 7 * day,
		titles: []string{"{O} to unlock {N}M {T} tokens on {D}", "{N}M {T} tokens unlock on {D}", "{T} faces {N}M token unlock on {D}",
			"Scheduled {T} unlock on {D} releases {N}M tokens to early backers", "{O} vesting cliff on {D} frees {N}M {T}"},
		bullets: []string{"Unlock equals {N}% of circulating supply", "Tokens go to investors and contributors", "The cliff ends on {D}", "Linear vesting follows the cliff"},
		next:    []storyStep{{"unlock_completed", 7 * day, 0.8}}},
	{cat: "tokenomics", name: "unlock_completed", cast: castOne(unlockable),
		titles:  []string{"{O} unlock completes as {N}M {T} enter circulation", "{T} supply jumps after {N}M token unlock", "{N}M {T} tokens released to early backers"},
		bullets: []string{"Circulating supply rose {N}%", "Some unlocked tokens moved to exchanges", "Further unlocks follow monthly", "Tokens go to investors and contributors"}},
	{cat: "tokenomics", name: "buyback", weight: 1, cast: castOne(apps),
		titles:  []string{"{O} announces {T} buyback program", "{O} treasury begins ${N}M {T} buyback", "{O} to buy back {T} with protocol revenue"},
		bullets: []string{"Buyback funded by protocol revenue", "Purchases run over six months", "Bought tokens go to the treasury", "The program was approved by governance"}},
	{cat: "tokenomics", name: "burn", weight: 1, cast: castOne(apps),
		titles:  []string{"{O} burns {N}M {T} from treasury", "{T} supply falls after {O} burn", "{O} destroys {N}M {T} in token burn"},
		bullets: []string{"Burn is permanent and verifiable on-chain", "Supply falls by {N}%", "Burns repeat every quarter", "The burn was approved by governance"}},
	{cat: "tokenomics", name: "depeg", weight: 1, cast: castStable,
		titles: []string{"{O} stablecoin slips below its dollar peg", "{T} depegs as redemptions surge", "{T} loses its $1 peg, trades at 0.97",
			"{O} stablecoin wobbles off peg"},
		bullets: []string{"Redemptions reached ${N}M in a day", "The peg broke during thin liquidity", "Reserves are fully backed, the issuer says", "Market makers stepped in"},
		next:    []storyStep{{"repeg", 12 * time.Hour, 0.8}}},
	{cat: "tokenomics", name: "repeg", cast: castStable,
		titles:  []string{"{T} regains its dollar peg", "{O} stablecoin back at $1 after depeg", "{T} restores peg as redemptions slow"},
		bullets: []string{"The peg was restored within a day", "Redemptions were processed in full", "The issuer published reserves", "Liquidity returned to pools"}},
}

// seedChainComponents are the parts of a chain that fail.
var seedChainComponents = []string{"validator client", "consensus engine", "transaction scheduler", "RPC nodes",
	"block propagation", "fee market logic"}

// storyBySub finds a happening kind by its key.
var storyBySub = func() map[string]*storySub {
	out := map[string]*storySub{}
	for _, s := range storySubs {
		if s.key == "" {
			s.key = s.name
		}
		out[s.key] = s
	}
	return out
}()

// storyCategories are the categories in draw order with their fresh kinds.
var storyCategories = func() []storyCategory {
	var out []storyCategory
	index := map[string]int{}
	for _, s := range storySubs {
		if s.weight == 0 {
			continue
		}
		i, ok := index[s.cat]
		if !ok {
			i = len(out)
			index[s.cat] = i
			out = append(out, storyCategory{name: s.cat, weight: storyCategoryWeights[s.cat]})
		}
		out[i].subs = append(out[i].subs, s)
		out[i].subWeight += s.weight
	}
	return out
}()

type storyCategory struct {
	name      string
	weight    int
	subs      []*storySub
	subWeight int
}

var storyCategoryTotal = func() int {
	n := 0
	for _, c := range storyCategories {
		n += c.weight
	}
	return n
}()

// pickStory draws a fresh happening kind.
func pickStory(rng *rand.Rand) *storySub {
	n := rng.IntN(storyCategoryTotal)
	c := &storyCategories[len(storyCategories)-1]
	for i := range storyCategories {
		if n < storyCategories[i].weight {
			c = &storyCategories[i]
			break
		}
		n -= storyCategories[i].weight
	}
	k := rng.IntN(c.subWeight)
	for _, s := range c.subs {
		if k < s.weight {
			return s
		}
		k -= s.weight
	}
	return c.subs[len(c.subs)-1]
}

// seedSources are the outlets that report the demo world's news.
var seedSources = []string{
	"Ledger Street", "Chainwire Daily", "Block Report", "Mempool News", "DeFi Wire", "Validator Weekly",
	"Token Gazette", "On-chain Observer", "Official blog", "Press release", "Governance forum", "Exchange announcement",
	"Analyst note", "Research desk", "Social post",
}
