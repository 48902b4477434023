"""Expected values from outside for evalkit's variance components (inference/variance.py,
one_way), computed once with statsmodels' `anova_lm` and committed beside the tests as
variance_components.csv. evalkit does not depend on statsmodels: run this from a scratch
environment that has it (pip install statsmodels pandas), from this folder:

    python variance_components.py > variance_components.csv

Each case is (passes, reps) per scenario; each rep is a 0/1 outcome and the scenario is a
fixed factor of an OLS fit, whose type-I ANOVA table gives the sums of squares and mean
squares. The method-of-moments components follow from those mean squares in closed form
(Searle, Casella & McCulloch 1992, section 3.6): n0 = (N - sum n_i^2 / N) / (G - 1),
between = max(0, (MS_between - MS_within) / n0), within = MS_within.
"""

import random
import sys

import pandas as pd
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm

rng = random.Random(44)
CASES = {
    "v3_mixed": ([3, 2, 0], [3, 3, 3]),
    "v4_uneven": ([1, 4, 9, 2], [2, 5, 10, 4]),
    "v6_binomial": ([2, 1, 2, 2, 1, 2], [3] * 6),
    "v6_high": ([10, 9, 7, 10, 4, 8], [10] * 6),
    "v8_icc": ([10, 10, 0, 0, 10, 10, 0, 10], [10] * 8),
    "v12_uneven": ([5, 4, 2, 9, 1, 3, 3, 7, 0, 2, 6, 4], [5, 6, 3, 10, 4, 3, 5, 8, 2, 3, 9, 6]),
    "v10_random": ([rng.randint(0, 10) for _ in range(10)], [10] * 10),
}

out = sys.stdout
out.write(
    "case,k,n,df_between,ss_between,ms_between,df_within,ss_within,ms_within,"
    "n0,between,within,icc,deff,effective_n\n"
)
for name, (k, n) in CASES.items():
    y, s = [], []
    for i, (ki, ni) in enumerate(zip(k, n, strict=True)):
        y += [1.0] * ki + [0.0] * (ni - ki)
        s += [f"s{i:02d}"] * ni
    fit = smf.ols("y ~ C(s)", data=pd.DataFrame({"y": y, "s": s})).fit()
    table = anova_lm(fit, typ=1)
    g, total = len(n), sum(n)
    msb, msw = table.loc["C(s)", "mean_sq"], table.loc["Residual", "mean_sq"]
    n0 = (total - sum(x * x for x in n) / total) / (g - 1)
    between = max(0.0, (msb - msw) / n0)
    icc = between / (between + msw) if between + msw > 0 else float("nan")
    deff = 1 + (total / g - 1) * (0.0 if icc != icc else icc)
    row = [
        name,
        " ".join(map(str, k)),
        " ".join(map(str, n)),
        f"{table.loc['C(s)', 'df']:.0f}",
        *(f"{v:.15e}" for v in (table.loc["C(s)", "sum_sq"], msb)),
        f"{table.loc['Residual', 'df']:.0f}",
        *(f"{v:.15e}" for v in (table.loc["Residual", "sum_sq"], msw)),
        *(f"{v:.15e}" for v in (n0, between, msw, icc, deff, total / deff)),
    ]
    out.write(",".join(row) + "\n")
