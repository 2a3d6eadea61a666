package demo

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// The demo world: what each entity is and the relationships between them,
// from which the events are told. Entity types do what they do: exchanges
// list tokens (LISTED_ON) and get hacked; funds invest in projects
// (INVESTED_IN) and announce rounds; regulators oversee exchanges and
// stablecoin issuers (REGULATES), sue them and approve them; foundations
// fund and govern their chains (FOUNDATION_OF); applications are built on
// chains (BUILT_ON) and partner with other applications (PARTNER_OF). The
// events only pair entities that the relationships pair.

// Kinds of projects: what a project is decides what can happen to it.
const (
	kindCoin   = "coin"   // a mature payment coin: no investors, no unlocks
	kindChain  = "chain"  // a layer-1 chain: upgrades, outages, grants
	kindL2     = "l2"     // a rollup: upgrades, sequencer outages
	kindApp    = "app"    // DeFi and infrastructure: hacks, votes, rounds
	kindGame   = "game"   // games and metaverses
	kindStable = "stable" // stablecoins and their issuers: depegs
)

// namedKinds are the kinds of the named projects (the others are apps).
var namedKinds = func() map[string]string {
	out := map[string]string{}
	for kind, names := range map[string][]string{
		kindCoin: {"Bitcoin", "XRP Ledger", "Litecoin", "Dogecoin", "Stellar", "Zcash", "Monero", "Bitcoin Cash",
			"Ethereum Classic", "Kaspa"},
		kindChain: {"Ethereum", "Solana", "Cardano", "Avalanche", "Polkadot", "Toncoin", "Tron", "Cosmos",
			"Near Protocol", "Sui", "Aptos", "Celestia", "Injective", "Sei", "Algorand", "Tezos", "Hedera",
			"Internet Computer", "MultiversX", "VeChain", "Celo", "Flow", "Mina Protocol", "Kava", "Fantom",
			"Berachain", "Monad", "Oasis Network", "Dymension", "Filecoin", "Stacks", "Ronin", "Bittensor"},
		kindL2: {"Arbitrum", "Optimism", "Polygon", "Starknet", "zkSync", "Base", "Blast", "Scroll", "Linea",
			"Mantle", "Immutable"},
		kindGame:   {"Decentraland", "The Sandbox", "Axie Infinity", "Chiliz", "Theta Network"},
		kindStable: {"Tether", "USD Coin", "Ethena", "Frax Finance"},
	} {
		for _, n := range names {
			out[n] = kind
		}
	}
	return out
}()

// homeChains are the chains named applications are built on (others:
// Ethereum).
var homeChains = map[string]string{
	"Jupiter": "Solana", "Raydium": "Solana", "Jito": "Solana", "Pyth Network": "Solana", "Helium": "Solana",
	"Render": "Solana", "GMX": "Arbitrum", "Pendle": "Arbitrum", "Osmosis": "Cosmos", "Axelar": "Cosmos",
	"THORChain": "Cosmos", "PancakeSwap": "Base", "Mantra": "Cosmos", "Akash Network": "Cosmos",
	"Axie Infinity": "Ronin", "Chiliz": "Ethereum", "Theta Network": "Ethereum", "Atomic Finance": "Cosmos",
	"NovaDAO": "Arbitrum", "Nova Network": "Polygon",
}

// youngChains are the chains whose tokens still vest.
var youngChains = map[string]bool{"Sui": true, "Aptos": true, "Celestia": true, "Sei": true, "Berachain": true,
	"Monad": true, "Dymension": true, "Injective": true, "Near Protocol": true, "Bittensor": true}

// etfAssets are the assets spot exchange-traded funds are filed for.
var etfAssets = []string{"Bitcoin", "Ethereum", "Solana", "XRP Ledger", "Litecoin", "Dogecoin", "Cardano",
	"Avalanche", "Hedera", "Polkadot", "Sui"}

// etfRegulators approve spot funds.
var etfRegulators = []string{"U.S. Securities and Exchange Commission", "Securities and Futures Commission",
	"Australian Securities and Investments Commission", "Financial Conduct Authority"}

// stableRegulators oversee stablecoin issuers.
var stableRegulators = []string{"U.S. Securities and Exchange Commission", "Office of the Comptroller of the Currency",
	"European Securities and Markets Authority", "Monetary Authority of Singapore", "Financial Conduct Authority"}

// pair is a relationship between two entities.
type pair struct{ a, b *seedEntity }

// world is the entities' roles and relationships.
type world struct {
	chains, l2s, hosts, apps, games, stables, coins, investable, unlockable []*seedEntity
	governed, all, exchanges, etf, etfRegulators                            []*seedEntity

	foundationOf map[*seedEntity]*seedEntity   // chain → foundation
	builtOn      map[*seedEntity][]*seedEntity // chain → applications
	hostOf       map[*seedEntity]*seedEntity   // application → chain
	listings     []pair                        // (project, exchange), popular projects first
	investments  []pair                        // (fund, project)
	regulation   []pair                        // (regulator, exchange or project)
	regulatorsOf map[*seedEntity][]*seedEntity // exchange/project → regulators
	exchangesOf  map[*seedEntity][]*seedEntity // project → exchanges
	investorsOf  map[*seedEntity][]*seedEntity // project → funds
	partners     []pair                        // (project, project)

	rows [][]any // the relationships' COPY rows
}

// kindOf is what a project is.
func (g *seedGen) kindOf(e *seedEntity) string {
	if k, ok := namedKinds[e.name]; ok {
		return k
	}
	return kindApp
}

// buildWorld decides the roles and draws the relationships.
func (g *seedGen) buildWorld() {
	w := &world{foundationOf: map[*seedEntity]*seedEntity{}, builtOn: map[*seedEntity][]*seedEntity{},
		hostOf: map[*seedEntity]*seedEntity{}, regulatorsOf: map[*seedEntity][]*seedEntity{},
		exchangesOf: map[*seedEntity][]*seedEntity{}, investorsOf: map[*seedEntity][]*seedEntity{}}
	g.world = w
	w.all = g.pools[seedProject]
	w.exchanges = g.pools[seedExchange]
	for _, p := range g.pools[seedProject] {
		switch g.kindOf(p) {
		case kindCoin:
			w.coins = append(w.coins, p)
		case kindChain:
			w.chains = append(w.chains, p)
		case kindL2:
			w.l2s = append(w.l2s, p)
		case kindGame:
			w.games = append(w.games, p)
			w.apps = append(w.apps, p)
		case kindStable:
			w.stables = append(w.stables, p)
		default:
			w.apps = append(w.apps, p)
		}
		switch k := g.kindOf(p); {
		case k == kindApp, k == kindGame, k == kindL2:
			w.unlockable = append(w.unlockable, p)
			w.governed = append(w.governed, p)
		case youngChains[p.name]:
			w.unlockable = append(w.unlockable, p)
		}
	}
	// Funds invest in what still raises money: applications, rollups and
	// young chains.
	w.investable = w.unlockable
	w.hosts = append(append([]*seedEntity{}, w.chains...), w.l2s...)
	slices.SortStableFunc(w.hosts, func(a, b *seedEntity) int { return int(a.id - b.id) })
	for _, n := range etfAssets {
		w.etf = append(w.etf, g.byName[n])
	}
	for _, n := range etfRegulators {
		w.etfRegulators = append(w.etfRegulators, g.byName[n])
	}

	rng := rand.New(rand.NewPCG(g.seed, 0x5e1a7))
	seen := map[string]bool{}
	add := func(src, dst *seedEntity, typ string, expand bool) bool {
		if src == nil || dst == nil || src == dst {
			return false
		}
		key := fmt.Sprintf("%d:%d:%s", src.id, dst.id, typ)
		if seen[key] {
			return false
		}
		seen[key] = true
		w.rows = append(w.rows, []any{src.id, dst.id, typ, "active", expand})
		return true
	}
	// Foundations fund and govern their chains.
	for _, f := range g.pools[seedFoundation] {
		if p := g.byName[f.of]; p != nil && add(f, p, "FOUNDATION_OF", true) {
			w.foundationOf[p] = f
		}
	}
	// Applications live on a chain: the named ones on their home chain,
	// the others mostly on the popular chains.
	popularHosts := []string{"Ethereum", "Solana", "Arbitrum", "Base", "Polygon", "Avalanche", "Sui", "Aptos",
		"Near Protocol", "Cosmos", "Optimism", "Toncoin"}
	for _, a := range w.apps {
		host := g.byName["Ethereum"]
		if h, ok := homeChains[a.name]; ok {
			host = g.byName[h]
		} else if !a.named {
			host = g.byName[popularHosts[int(float64(len(popularHosts))*rng.Float64()*rng.Float64())]]
		}
		if add(a, host, "BUILT_ON", false) {
			w.hostOf[a] = host
			w.builtOn[host] = append(w.builtOn[host], a)
		}
	}
	// Exchanges list tokens: popular projects on many exchanges, new ones on
	// a few; mature coins and stablecoins everywhere popular.
	exchanges := g.pools[seedExchange]
	for i, p := range g.pools[seedProject] {
		n := 1 + rng.IntN(2)
		if p.named {
			n = 3 + rng.IntN(4)
			if i < 12 {
				n += 6
			}
		}
		for range n {
			x := pick(rng, exchanges)
			if add(p, x, "LISTED_ON", false) {
				w.listings = append(w.listings, pair{p, x})
				w.exchangesOf[p] = append(w.exchangesOf[p], x)
			}
		}
	}
	// Funds invest in young projects, never in Bitcoin or a stablecoin.
	for _, f := range g.pools[seedFund] {
		for range 8 + rng.IntN(10) {
			p := pick(rng, w.investable)
			if add(f, p, "INVESTED_IN", false) {
				w.investments = append(w.investments, pair{f, p})
				w.investorsOf[p] = append(w.investorsOf[p], f)
			}
		}
	}
	// Regulators oversee the exchanges of their markets and the stablecoin
	// issuers.
	for _, r := range g.pools[seedRegulator] {
		for range 3 + rng.IntN(5) {
			x := pick(rng, exchanges)
			if add(r, x, "REGULATES", false) {
				w.regulation = append(w.regulation, pair{r, x})
				w.regulatorsOf[x] = append(w.regulatorsOf[x], r)
			}
		}
	}
	for _, n := range stableRegulators {
		r := g.byName[n]
		for _, s := range w.stables {
			if add(r, s, "REGULATES", false) {
				w.regulation = append(w.regulation, pair{r, s})
				w.regulatorsOf[s] = append(w.regulatorsOf[s], r)
			}
		}
	}
	// Applications partner with applications, most often on the same chain.
	for range len(w.apps) / 2 {
		a := pick(rng, w.apps)
		var b *seedEntity
		if peers := w.builtOn[w.hostOf[a]]; len(peers) > 1 && rng.Float64() < 0.7 {
			b = pickOther(rng, peers, a)
		} else {
			b = pickOther(rng, w.apps, a)
		}
		if add(a, b, "PARTNER_OF", false) {
			w.partners = append(w.partners, pair{a, b})
		}
	}
}

// pickPair picks a relationship, favouring the head of the list (power
// law).
func pickPair(rng *rand.Rand, pairs []pair) pair {
	return pairs[int(float64(len(pairs))*rng.Float64()*rng.Float64())]
}
