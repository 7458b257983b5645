package mcpserver

// Budgets for what every conversation pays before its first call, at the
// default tier: the part a model reads (names, descriptions, input
// schemas, instructions), and the whole tools/list result plus the
// instructions. Every tool keeps its output schema first of all, the part
// a model reads comes second and the whole third: when the whole cannot
// fit without dropping output schemas, the excess must be theirs alone
// (the rest of the list still fits), and the figures are reported.
const (
	WireBudget         = 24 << 10
	ModelVisibleBudget = 16 << 10
)
