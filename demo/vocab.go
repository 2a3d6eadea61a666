package demo

// Vocabulary of the demo seed: named entities and the templates events are
// written from. Names are real-world-style; URLs use reserved example
// domains.

// seedNamed is a named demo entity.
type seedNamed struct {
	name    string
	typ     string
	aliases []string
	// of names the project a foundation supports (FOUNDATION_OF).
	of string
}

// Entity types of the demo data.
const (
	seedProject    = "project"
	seedFoundation = "foundation"
	seedExchange   = "exchange"
	seedFund       = "fund"
	seedRegulator  = "government_institution"
)

// seedNamedEntities get ids from 100 in this order, so Ethereum is 101 and
// the Ethereum Foundation 102 as in the ingest page's examples. Projects are
// listed roughly by popularity: events favour the head of the list. Two
// tickers are deliberately shared (ATOM, NOVA) to exercise ambiguous name
// resolution.
var seedNamedEntities = []seedNamed{
	{name: "Bitcoin", typ: seedProject, aliases: []string{"BTC", "XBT"}},
	{name: "Ethereum", typ: seedProject, aliases: []string{"ETH", "Ether"}},
	{name: "Ethereum Foundation", typ: seedFoundation, aliases: []string{"EF"}, of: "Ethereum"},
	{name: "Solana", typ: seedProject, aliases: []string{"SOL"}},
	{name: "XRP Ledger", typ: seedProject, aliases: []string{"XRP", "XRPL"}},
	{name: "Cardano", typ: seedProject, aliases: []string{"ADA"}},
	{name: "Avalanche", typ: seedProject, aliases: []string{"AVAX"}},
	{name: "Chainlink", typ: seedProject, aliases: []string{"LINK"}},
	{name: "Polkadot", typ: seedProject, aliases: []string{"DOT"}},
	{name: "Polygon", typ: seedProject, aliases: []string{"POL", "MATIC"}},
	{name: "Toncoin", typ: seedProject, aliases: []string{"TON", "The Open Network"}},
	{name: "Tron", typ: seedProject, aliases: []string{"TRX"}},
	{name: "Cosmos", typ: seedProject, aliases: []string{"ATOM", "Cosmos Hub"}},
	{name: "Atomic Finance", typ: seedProject, aliases: []string{"ATOM"}},
	{name: "Near Protocol", typ: seedProject, aliases: []string{"NEAR"}},
	{name: "Arbitrum", typ: seedProject, aliases: []string{"ARB"}},
	{name: "Optimism", typ: seedProject, aliases: []string{"OP", "OP Mainnet"}},
	{name: "Uniswap", typ: seedProject, aliases: []string{"UNI"}},
	{name: "Aave", typ: seedProject, aliases: []string{"AAVE"}},
	{name: "Maker", typ: seedProject, aliases: []string{"MKR", "Sky"}},
	{name: "Lido", typ: seedProject, aliases: []string{"LDO", "Lido Finance"}},
	{name: "Litecoin", typ: seedProject, aliases: []string{"LTC"}},
	{name: "Dogecoin", typ: seedProject, aliases: []string{"DOGE"}},
	{name: "Stellar", typ: seedProject, aliases: []string{"XLM"}},
	{name: "Sui", typ: seedProject, aliases: []string{"SUI"}},
	{name: "Aptos", typ: seedProject, aliases: []string{"APT"}},
	{name: "Celestia", typ: seedProject, aliases: []string{"TIA"}},
	{name: "Injective", typ: seedProject, aliases: []string{"INJ"}},
	{name: "Sei", typ: seedProject, aliases: []string{"SEI"}},
	{name: "Starknet", typ: seedProject, aliases: []string{"STRK"}},
	{name: "zkSync", typ: seedProject, aliases: []string{"ZK", "ZKsync Era"}},
	{name: "Filecoin", typ: seedProject, aliases: []string{"FIL"}},
	{name: "Arweave", typ: seedProject, aliases: []string{"AR"}},
	{name: "Render", typ: seedProject, aliases: []string{"RENDER", "RNDR"}},
	{name: "The Graph", typ: seedProject, aliases: []string{"GRT"}},
	{name: "Algorand", typ: seedProject, aliases: []string{"ALGO"}},
	{name: "Tezos", typ: seedProject, aliases: []string{"XTZ"}},
	{name: "Hedera", typ: seedProject, aliases: []string{"HBAR"}},
	{name: "Internet Computer", typ: seedProject, aliases: []string{"ICP"}},
	{name: "Kaspa", typ: seedProject, aliases: []string{"KAS"}},
	{name: "Stacks", typ: seedProject, aliases: []string{"STX"}},
	{name: "Immutable", typ: seedProject, aliases: []string{"IMX", "Immutable X"}},
	{name: "Curve", typ: seedProject, aliases: []string{"CRV", "Curve Finance"}},
	{name: "Compound", typ: seedProject, aliases: []string{"COMP"}},
	{name: "Synthetix", typ: seedProject, aliases: []string{"SNX"}},
	{name: "dYdX", typ: seedProject, aliases: []string{"DYDX"}},
	{name: "GMX", typ: seedProject, aliases: []string{"GMX"}},
	{name: "Pendle", typ: seedProject, aliases: []string{"PENDLE"}},
	{name: "Jupiter", typ: seedProject, aliases: []string{"JUP"}},
	{name: "Pyth Network", typ: seedProject, aliases: []string{"PYTH"}},
	{name: "Wormhole", typ: seedProject, aliases: []string{"W"}},
	{name: "LayerZero", typ: seedProject, aliases: []string{"ZRO"}},
	{name: "EigenLayer", typ: seedProject, aliases: []string{"EIGEN"}},
	{name: "Ethena", typ: seedProject, aliases: []string{"ENA", "USDe"}},
	{name: "Ondo Finance", typ: seedProject, aliases: []string{"ONDO"}},
	{name: "Worldcoin", typ: seedProject, aliases: []string{"WLD", "World"}},
	{name: "Chiliz", typ: seedProject, aliases: []string{"CHZ"}},
	{name: "Decentraland", typ: seedProject, aliases: []string{"MANA"}},
	{name: "The Sandbox", typ: seedProject, aliases: []string{"SAND"}},
	{name: "Axie Infinity", typ: seedProject, aliases: []string{"AXS"}},
	{name: "Helium", typ: seedProject, aliases: []string{"HNT"}},
	{name: "Theta Network", typ: seedProject, aliases: []string{"THETA"}},
	{name: "Flow", typ: seedProject, aliases: []string{"FLOW"}},
	{name: "MultiversX", typ: seedProject, aliases: []string{"EGLD", "Elrond"}},
	{name: "Quant", typ: seedProject, aliases: []string{"QNT"}},
	{name: "VeChain", typ: seedProject, aliases: []string{"VET"}},
	{name: "Mantle", typ: seedProject, aliases: []string{"MNT"}},
	{name: "Celo", typ: seedProject, aliases: []string{"CELO"}},
	{name: "Osmosis", typ: seedProject, aliases: []string{"OSMO"}},
	{name: "Kava", typ: seedProject, aliases: []string{"KAVA"}},
	{name: "THORChain", typ: seedProject, aliases: []string{"RUNE"}},
	{name: "1inch", typ: seedProject, aliases: []string{"1INCH"}},
	{name: "SushiSwap", typ: seedProject, aliases: []string{"SUSHI"}},
	{name: "PancakeSwap", typ: seedProject, aliases: []string{"CAKE"}},
	{name: "Raydium", typ: seedProject, aliases: []string{"RAY"}},
	{name: "Jito", typ: seedProject, aliases: []string{"JTO"}},
	{name: "Frax Finance", typ: seedProject, aliases: []string{"FXS", "FRAX"}},
	{name: "Rocket Pool", typ: seedProject, aliases: []string{"RPL"}},
	{name: "Convex Finance", typ: seedProject, aliases: []string{"CVX"}},
	{name: "Balancer", typ: seedProject, aliases: []string{"BAL"}},
	{name: "Yearn Finance", typ: seedProject, aliases: []string{"YFI"}},
	{name: "Gnosis", typ: seedProject, aliases: []string{"GNO"}},
	{name: "Safe", typ: seedProject, aliases: []string{"SAFE", "Gnosis Safe"}},
	{name: "Ethereum Name Service", typ: seedProject, aliases: []string{"ENS"}},
	{name: "Mina Protocol", typ: seedProject, aliases: []string{"MINA"}},
	{name: "Zcash", typ: seedProject, aliases: []string{"ZEC"}},
	{name: "Monero", typ: seedProject, aliases: []string{"XMR"}},
	{name: "Bitcoin Cash", typ: seedProject, aliases: []string{"BCH"}},
	{name: "Ethereum Classic", typ: seedProject, aliases: []string{"ETC"}},
	{name: "Akash Network", typ: seedProject, aliases: []string{"AKT"}},
	{name: "Bittensor", typ: seedProject, aliases: []string{"TAO"}},
	{name: "Fetch.ai", typ: seedProject, aliases: []string{"FET"}},
	{name: "Ocean Protocol", typ: seedProject, aliases: []string{"OCEAN"}},
	{name: "Tether", typ: seedProject, aliases: []string{"USDT"}},
	{name: "USD Coin", typ: seedProject, aliases: []string{"USDC", "Circle USDC"}},
	{name: "Base", typ: seedProject, aliases: []string{"Base L2"}},
	{name: "Blast", typ: seedProject, aliases: []string{"BLAST"}},
	{name: "Scroll", typ: seedProject, aliases: []string{"SCR"}},
	{name: "Linea", typ: seedProject, aliases: []string{"LINEA"}},
	{name: "Berachain", typ: seedProject, aliases: []string{"BERA"}},
	{name: "Monad", typ: seedProject, aliases: []string{"MON"}},
	{name: "Nova Network", typ: seedProject, aliases: []string{"NOVA"}},
	{name: "NovaDAO", typ: seedProject, aliases: []string{"NOVA", "Nova DAO"}},
	{name: "Fantom", typ: seedProject, aliases: []string{"FTM", "Sonic"}},
	{name: "Ronin", typ: seedProject, aliases: []string{"RON"}},
	{name: "Oasis Network", typ: seedProject, aliases: []string{"ROSE"}},
	{name: "Mantra", typ: seedProject, aliases: []string{"OM"}},
	{name: "Axelar", typ: seedProject, aliases: []string{"AXL"}},
	{name: "Dymension", typ: seedProject, aliases: []string{"DYM"}},

	{name: "Solana Foundation", typ: seedFoundation, of: "Solana"},
	{name: "Cardano Foundation", typ: seedFoundation, of: "Cardano"},
	{name: "Web3 Foundation", typ: seedFoundation, aliases: []string{"W3F"}, of: "Polkadot"},
	{name: "Avalanche Foundation", typ: seedFoundation, of: "Avalanche"},
	{name: "Interchain Foundation", typ: seedFoundation, aliases: []string{"ICF"}, of: "Cosmos"},
	{name: "NEAR Foundation", typ: seedFoundation, of: "Near Protocol"},
	{name: "Arbitrum Foundation", typ: seedFoundation, of: "Arbitrum"},
	{name: "Optimism Foundation", typ: seedFoundation, of: "Optimism"},
	{name: "Uniswap Foundation", typ: seedFoundation, of: "Uniswap"},
	{name: "Sui Foundation", typ: seedFoundation, of: "Sui"},
	{name: "Aptos Foundation", typ: seedFoundation, of: "Aptos"},
	{name: "Celestia Foundation", typ: seedFoundation, of: "Celestia"},
	{name: "TON Foundation", typ: seedFoundation, of: "Toncoin"},
	{name: "Tezos Foundation", typ: seedFoundation, of: "Tezos"},
	{name: "Algorand Foundation", typ: seedFoundation, of: "Algorand"},
	{name: "Stellar Development Foundation", typ: seedFoundation, aliases: []string{"SDF"}, of: "Stellar"},
	{name: "DFINITY Foundation", typ: seedFoundation, aliases: []string{"DFINITY"}, of: "Internet Computer"},
	{name: "Filecoin Foundation", typ: seedFoundation, of: "Filecoin"},
	{name: "Hedera Foundation", typ: seedFoundation, of: "Hedera"},
	{name: "Starknet Foundation", typ: seedFoundation, of: "Starknet"},
	{name: "Mina Foundation", typ: seedFoundation, of: "Mina Protocol"},
	{name: "Zcash Foundation", typ: seedFoundation, aliases: []string{"ZF"}, of: "Zcash"},
	{name: "Celo Foundation", typ: seedFoundation, of: "Celo"},
	{name: "Flow Foundation", typ: seedFoundation, of: "Flow"},
	{name: "Tron DAO", typ: seedFoundation, of: "Tron"},
	{name: "Chainlink Foundation", typ: seedFoundation, of: "Chainlink"},
	{name: "Polygon Foundation", typ: seedFoundation, of: "Polygon"},
	{name: "Injective Foundation", typ: seedFoundation, of: "Injective"},
	{name: "Sei Foundation", typ: seedFoundation, of: "Sei"},
	{name: "Kaspa Ecosystem Foundation", typ: seedFoundation, of: "Kaspa"},
	{name: "Stacks Foundation", typ: seedFoundation, of: "Stacks"},
	{name: "Aave Grants DAO", typ: seedFoundation, of: "Aave"},
	{name: "Mantle Foundation", typ: seedFoundation, of: "Mantle"},
	{name: "Bittensor Foundation", typ: seedFoundation, aliases: []string{"Opentensor Foundation"}, of: "Bittensor"},
	{name: "Axelar Foundation", typ: seedFoundation, of: "Axelar"},
	{name: "Osmosis Foundation", typ: seedFoundation, of: "Osmosis"},
	{name: "Ronin Foundation", typ: seedFoundation, of: "Ronin"},
	{name: "Oasis Foundation", typ: seedFoundation, of: "Oasis Network"},
	{name: "Monad Foundation", typ: seedFoundation, of: "Monad"},
	{name: "Berachain Foundation", typ: seedFoundation, of: "Berachain"},

	{name: "Binance", typ: seedExchange, aliases: []string{"BNB", "Binance Exchange"}},
	{name: "Coinbase", typ: seedExchange, aliases: []string{"COIN", "Coinbase Exchange"}},
	{name: "Kraken", typ: seedExchange},
	{name: "OKX", typ: seedExchange, aliases: []string{"OKB", "OKEx"}},
	{name: "Bybit", typ: seedExchange},
	{name: "Bitstamp", typ: seedExchange},
	{name: "Gemini", typ: seedExchange},
	{name: "KuCoin", typ: seedExchange, aliases: []string{"KCS"}},
	{name: "Gate.io", typ: seedExchange, aliases: []string{"Gate"}},
	{name: "Bitfinex", typ: seedExchange},
	{name: "HTX", typ: seedExchange, aliases: []string{"Huobi"}},
	{name: "Crypto.com Exchange", typ: seedExchange, aliases: []string{"CRO", "Crypto.com"}},
	{name: "Upbit", typ: seedExchange},
	{name: "Bithumb", typ: seedExchange},
	{name: "Bitget", typ: seedExchange, aliases: []string{"BGB"}},
	{name: "MEXC", typ: seedExchange},
	{name: "Bitso", typ: seedExchange},
	{name: "Bitpanda", typ: seedExchange},
	{name: "Deribit", typ: seedExchange},
	{name: "Robinhood Crypto", typ: seedExchange, aliases: []string{"Robinhood"}},
	{name: "Binance.US", typ: seedExchange},
	{name: "Coinone", typ: seedExchange},
	{name: "Bitvavo", typ: seedExchange},
	{name: "BingX", typ: seedExchange},
	{name: "Poloniex", typ: seedExchange},

	{name: "a16z crypto", typ: seedFund, aliases: []string{"a16z", "Andreessen Horowitz Crypto"}},
	{name: "Paradigm", typ: seedFund},
	{name: "Polychain Capital", typ: seedFund, aliases: []string{"Polychain"}},
	{name: "Pantera Capital", typ: seedFund, aliases: []string{"Pantera"}},
	{name: "Multicoin Capital", typ: seedFund, aliases: []string{"Multicoin"}},
	{name: "Dragonfly", typ: seedFund, aliases: []string{"Dragonfly Capital"}},
	{name: "Electric Capital", typ: seedFund},
	{name: "Framework Ventures", typ: seedFund},
	{name: "Coinbase Ventures", typ: seedFund},
	{name: "Binance Labs", typ: seedFund, aliases: []string{"YZi Labs"}},
	{name: "Jump Crypto", typ: seedFund},
	{name: "Galaxy Digital", typ: seedFund, aliases: []string{"Galaxy"}},
	{name: "Sequoia Capital", typ: seedFund, aliases: []string{"Sequoia"}},
	{name: "Digital Currency Group", typ: seedFund, aliases: []string{"DCG"}},
	{name: "Hashed", typ: seedFund},
	{name: "Animoca Brands", typ: seedFund, aliases: []string{"Animoca"}},
	{name: "Delphi Ventures", typ: seedFund},
	{name: "Placeholder", typ: seedFund, aliases: []string{"Placeholder VC"}},
	{name: "1kx", typ: seedFund},
	{name: "Variant", typ: seedFund, aliases: []string{"Variant Fund"}},
	{name: "Haun Ventures", typ: seedFund},
	{name: "Lightspeed Faction", typ: seedFund},
	{name: "Blockchain Capital", typ: seedFund},
	{name: "Spartan Group", typ: seedFund, aliases: []string{"Spartan"}},
	{name: "DeFiance Capital", typ: seedFund},

	{name: "U.S. Securities and Exchange Commission", typ: seedRegulator, aliases: []string{"SEC"}},
	{name: "Commodity Futures Trading Commission", typ: seedRegulator, aliases: []string{"CFTC"}},
	{name: "Financial Conduct Authority", typ: seedRegulator, aliases: []string{"FCA"}},
	{name: "European Securities and Markets Authority", typ: seedRegulator, aliases: []string{"ESMA"}},
	{name: "Monetary Authority of Singapore", typ: seedRegulator, aliases: []string{"MAS"}},
	{name: "Federal Financial Supervisory Authority", typ: seedRegulator, aliases: []string{"BaFin"}},
	{name: "Swiss Financial Market Supervisory Authority", typ: seedRegulator, aliases: []string{"FINMA"}},
	{name: "Securities and Futures Commission", typ: seedRegulator, aliases: []string{"SFC"}},
	{name: "Financial Services Agency", typ: seedRegulator, aliases: []string{"JFSA", "FSA"}},
	{name: "Autorité des marchés financiers", typ: seedRegulator, aliases: []string{"AMF"}},
	{name: "Office of the Comptroller of the Currency", typ: seedRegulator, aliases: []string{"OCC"}},
	{name: "Financial Crimes Enforcement Network", typ: seedRegulator, aliases: []string{"FinCEN"}},
	{name: "Virtual Assets Regulatory Authority", typ: seedRegulator, aliases: []string{"VARA"}},
	{name: "Australian Securities and Investments Commission", typ: seedRegulator, aliases: []string{"ASIC"}},
	{name: "Financial Services Commission", typ: seedRegulator, aliases: []string{"FSC"}},
	{name: "Dubai Financial Services Authority", typ: seedRegulator, aliases: []string{"DFSA"}},
	{name: "Central Bank of Brazil", typ: seedRegulator, aliases: []string{"BCB", "Banco Central do Brasil"}},
	{name: "Ontario Securities Commission", typ: seedRegulator, aliases: []string{"OSC"}},
}

// Generated project names are a prefix and a suffix.
var (
	seedNamePrefixes = []string{
		"Aether", "Zephyr", "Quantum", "Orbit", "Lumen", "Vertex", "Helix", "Nimbus", "Cobalt", "Aurora",
		"Photon", "Prism", "Stratus", "Vector", "Onyx", "Kinetic", "Nexus", "Radiant", "Solace", "Tidal",
		"Velvet", "Ember", "Flux", "Granite", "Harbor", "Ionic", "Juno", "Krypton", "Lyra", "Meridian",
		"Neon", "Opal", "Pulse", "Quasar", "Sable", "Titan", "Umbra", "Vega", "Warp", "Xeno", "Zenith",
		"Astra", "Beacon", "Cipher", "Delta", "Echo", "Fable", "Glacier", "Halo", "Indigo",
	}
	seedNameSuffixes = []string{
		"Protocol", "Network", "Finance", "Chain", "Labs", "Swap", "DAO", "Bridge", "Layer", "Markets",
		"Lend", "Vault", "Pay", "Oracle", "Games", "Fi", "Hub",
	}
)

// seedSubcategory is how events of one subcategory are written.
type seedSubcategory struct {
	name string
	// owner and participant are the entity types of the roles;
	// participant may be empty for none.
	owner, participant string
	titles             []string
}

// seedCategory groups subcategories with a relative frequency.
type seedCategory struct {
	name    string
	weight  int
	subs    []seedSubcategory
	bullets []string
}

// Placeholders: {O} owner, {P} participant, {T} owner ticker, {N} a number,
// {F} a feature, {C} a component, {U} an upgrade name.
var seedCategories = []seedCategory{
	{name: "partnership", weight: 16, subs: []seedSubcategory{
		{"integration", seedProject, seedProject, []string{"{O} integrates {P} for {F}", "{O} and {P} announce native integration", "{P} goes live on {O} with support for {F}"}},
		{"acquisition", seedProject, seedProject, []string{"{O} acquires {P} team to accelerate {F}", "{O} agrees to acquire {P} in all-token deal"}},
		{"collaboration", seedProject, seedProject, []string{"{O} partners with {P} on {F}", "{O} and {P} form working group on {F}"}},
		{"strategic_alliance", seedProject, seedExchange, []string{"{O} forms strategic alliance with {P}", "{P} and {O} launch joint {F} program"}},
	}, bullets: []string{"Integration targets {F}", "Rollout planned in phases over the coming weeks", "{T} holders are not required to take action", "Both teams will share engineering resources", "Initial launch covers mainnet only"}},
	{name: "funding", weight: 12, subs: []seedSubcategory{
		{"seed_round", seedProject, seedFund, []string{"{O} raises ${N}M seed round led by {P}", "{P} leads ${N}M seed investment in {O}"}},
		{"series_a", seedProject, seedFund, []string{"{O} closes ${N}M Series A with {P}", "{O} secures ${N}M in Series A funding"}},
		{"grants", seedFoundation, seedProject, []string{"{O} awards ${N}M grant to {P}", "{O} opens ${N}M grant program for {F}"}},
		{"strategic_investment", seedFund, seedProject, []string{"{O} makes strategic investment in {P}", "{O} backs {P} to expand {F}"}},
	}, bullets: []string{"Round size: ${N}M", "Funds earmarked for {F}", "Valuation was not disclosed", "Hiring plans include protocol engineers", "Existing investors participated"}},
	{name: "listing", weight: 12, subs: []seedSubcategory{
		{"spot_listing", seedProject, seedExchange, []string{"{P} lists {O} ({T}) for spot trading", "{T} spot trading opens on {P}"}},
		{"futures_listing", seedProject, seedExchange, []string{"{P} launches {T} perpetual futures", "{P} adds {T} margin and futures pairs"}},
		{"delisting", seedProject, seedExchange, []string{"{P} to delist {T} trading pairs", "{P} announces removal of {O} ({T}) markets"}},
	}, bullets: []string{"Trading pairs: {T}/USDT and {T}/USD", "Deposits open ahead of trading", "Withdrawals follow one day later", "Listing fee was not disclosed", "Liquidity incentives run for 30 days"}},
	{name: "technology", weight: 18, subs: []seedSubcategory{
		{"mainnet_launch", seedProject, "", []string{"{O} mainnet goes live", "{O} launches mainnet with {F}"}},
		{"upgrade", seedProject, "", []string{"{O} activates {U} upgrade", "{O} schedules {U} network upgrade for {F}"}},
		{"testnet", seedProject, "", []string{"{O} opens public testnet for {F}", "{O} testnet adds {F}"}},
		{"protocol_release", seedProject, "", []string{"{O} releases v{N}.0 client", "{O} ships {F} in latest release"}},
		{"outage", seedProject, "", []string{"{O} mainnet halts block production for {N} minutes", "{O} network suffers outage as validators stall", "Transactions stuck on {O} after consensus bug"}},
	}, bullets: []string{"Upgrade introduces {F}", "Node operators must update before activation", "Audits completed ahead of release", "Throughput improvements reported in testing", "Backward-compatible with existing tooling"}},
	{name: "security", weight: 7, subs: []seedSubcategory{
		{"exploit", seedProject, "", []string{"{O} suffers ${N}M exploit in {C}", "Attacker drains ${N}M from {O} {C}"}},
		{"vulnerability_disclosure", seedProject, "", []string{"{O} patches critical bug in {C}", "Researchers disclose {C} vulnerability in {O}"}},
		{"audit", seedProject, "", []string{"{O} completes security audit of {C}", "{O} publishes {C} audit results"}},
		{"funds_frozen", seedProject, seedExchange, []string{"{P} froze ${N}M of stolen funds linked to {O} breach", "{O} {C} breach: {P} freezes attacker deposits"}},
	}, bullets: []string{"Affected component: {C}", "Funds at risk estimated at ${N}M", "A post-mortem will follow", "Bug bounty paid to the reporter", "Contracts paused as a precaution"}},
	{name: "regulation", weight: 8, subs: []seedSubcategory{
		{"enforcement_action", seedExchange, seedRegulator, []string{"{P} takes enforcement action against {O}", "{P} fines {O} over compliance failures"}},
		{"license_granted", seedExchange, seedRegulator, []string{"{O} secures license from {P}", "{P} grants {O} registration to operate"}},
		{"policy_statement", seedProject, seedRegulator, []string{"{P} issues guidance affecting {O}", "{P} statement clarifies treatment of {T}"}},
		{"lawsuit", seedProject, seedRegulator, []string{"{P} files lawsuit against {O}", "{O} challenges {P} in court"}},
		{"etf_approval", seedProject, seedRegulator, []string{"{P} clears spot {T} exchange-traded fund", "{P} greenlights first {O} ETF listings"}},
	}, bullets: []string{"Decision follows a multi-year review", "Compliance deadline set for next quarter", "Penalty of ${N}M announced", "Company says it will cooperate", "Guidance applies to {F}"}},
	{name: "analysis", weight: 10, subs: []seedSubcategory{
		{"research_report", seedProject, "", []string{"Research: {O} network activity and fee trends", "Deep dive: {O} and the economics of {F}"}},
		{"market_analysis", seedProject, "", []string{"{T} market structure after recent volatility", "Analysts weigh {T} outlook as {F} gains traction"}},
		{"onchain_analysis", seedProject, "", []string{"On-chain data shows {O} whale accumulation", "{T} exchange outflows hit multi-month high"}},
	}, bullets: []string{"Active addresses up {N}% month over month", "Fee revenue concentrated in {F}", "Exchange balances declining", "Holder distribution remains concentrated", "Methodology uses public on-chain data"}},
	{name: "governance", weight: 6, subs: []seedSubcategory{
		{"proposal", seedProject, "", []string{"{O} DAO proposes changes to {F}", "{O} community debates {U} proposal"}},
		{"vote_result", seedProject, "", []string{"{O} governance approves {F} proposal", "{O} token holders reject {U} proposal"}},
	}, bullets: []string{"Quorum reached with {N}% participation", "Changes take effect after a timelock", "Treasury allocation of ${N}M requested", "Delegates split on the proposal"}},
	{name: "media", weight: 6, subs: []seedSubcategory{
		{"media_content", seedProject, "", []string{"Video: {O} founders on the road ahead", "Explainer: how {O} approaches {F}"}},
		{"interview", seedProject, "", []string{"Interview: {O} core developer on {F}", "{O} lead talks {U} upgrade in interview"}},
		{"podcast", seedProject, "", []string{"Podcast: what {O}'s {F} means for users", "Podcast episode covers {T} ecosystem growth"}},
	}, bullets: []string{"Episode runs about {N} minutes", "Discussion covers {F}", "Roadmap items for next year mentioned", "Audience questions answered live"}},
	{name: "tokenomics", weight: 5, subs: []seedSubcategory{
		{"token_unlock", seedProject, "", []string{"{O} to unlock {N}M {T} tokens", "Scheduled {T} unlock releases {N}M tokens to early backers"}},
		{"buyback", seedProject, "", []string{"{O} announces {T} buyback program", "{O} treasury begins ${N}M {T} buyback"}},
		{"burn", seedProject, "", []string{"{O} burns {N}M {T} from treasury", "{T} supply falls after {O} burn"}},
		{"depeg", seedProject, "", []string{"{O} stablecoin slips below its dollar peg", "{T} depegs as redemptions surge"}},
	}, bullets: []string{"Unlock equals {N}% of circulating supply", "Tokens go to investors and contributors", "Buyback funded by protocol revenue", "Burn is permanent and verifiable on-chain"}},
}

var (
	seedFeatures = []string{
		"zero-knowledge proofs", "account abstraction", "restaking", "cross-chain messaging", "data availability",
		"staking rewards", "fee markets", "sequencer decentralization", "light clients", "oracle feeds",
		"liquid staking", "MEV protection", "parallel execution", "stablecoin payments", "real-world assets",
		"tokenized treasuries", "on-chain identity", "decentralized storage", "AI agents", "gaming infrastructure",
	}
	seedComponents = []string{
		"bridge contract", "lending pool", "staking module", "price oracle", "governance module", "DEX router",
		"validator client", "vault strategy", "wallet SDK",
	}
	seedUpgrades = []string{
		"Phoenix", "Atlas", "Horizon", "Cobalt", "Pioneer", "Aurora", "Summit", "Catalyst", "Lighthouse", "Voyager",
	}
	seedSources = []string{
		"Official blog", "Press release", "Governance forum", "Developer update", "Exchange announcement",
		"Community call", "Newswire", "Analyst note", "Social post", "Research desk",
	}
	seedSummaryTails = []string{
		"The move is expected to affect {T} activity in the near term.",
		"Observers link the development to growing demand for {F}.",
		"The team said further details will follow in the coming weeks.",
		"Market participants reacted cautiously to the announcement.",
		"It is the latest step in {O}'s roadmap for {F}.",
	}
	seedMarketQuestions = []string{
		"Will {T} trade above ${N} by {D}?",
		"Will {O} ship its {U} upgrade before {D}?",
		"Will a spot {T} ETF be approved by {D}?",
		"Will {O} reach {N}M daily transactions by {D}?",
	}
	seedSubeventTypes  = []string{"catalyst", "risk", "milestone", "sentiment"}
	seedSubeventLabels = []string{
		"ETF flows", "Upgrade timeline", "Regulatory review", "Exchange listings", "Whale activity",
		"Developer activity", "Funding news", "Security incidents",
	}
)
