package study

// LadderRule returns the models the budget ladder's decision rule names
// (docs/figures/ladder/README.md): TF(4,4) with learned positions at budget
// K and at K/2, and TF(4,4,4) — its two layers' heads and one more layer —
// at K, where K is the largest budget at which that three-layer model was
// trained (at least ×2). Among several two-layer architectures the rule
// reads the one with the largest such K (the first listed on a tie). A
// rung above K with TF(4,4) alone (the pre-registered ×8 rung) has its own
// rule and leaves this one, fixed for the ladder's ×4 top, as it was: the
// report's post-hoc fits of this rule read the budgets up to K only; the
// rung's predictions (the report's section on it and the figure's laws)
// read the budgets below the rung, 2K. ok is false where Fig3Models names
// no such trio.
func (c Config) LadderRule() (top, half, deep Model, ok bool) {
	var ms []Model
	for _, s := range c.Fig3Models {
		if m, err := ParseModel(s); err == nil {
			ms = append(ms, m)
		}
	}
	best := 0
	for _, a := range ms {
		if !a.Plain(2) {
			continue
		}
		var t, h, d Model
		var okT, okH, okD bool
		k := 0
		for _, m := range ms {
			if m.Plain(3) && m.Heads[0] == a.Heads[0] && m.Heads[1] == a.Heads[1] && max(1, m.Budget) > k {
				k, d, okD = max(1, m.Budget), m, true
			}
		}
		for _, m := range ms {
			switch b := max(1, m.Budget); {
			case m.Architecture() != a.Architecture():
			case b == k:
				t, okT = m, true
			case 2*b == k:
				h, okH = m, true
			}
		}
		if okT && okH && okD && k >= 2 && k > best {
			best, top, half, deep = k, t, h, d
		}
	}
	return top, half, deep, best > 0
}
