# Expected values (the outside oracle) for evalkit's scenario-clustered interval (evalkit/stats.py,
# clustered_interval), computed once with the R survey package and committed beside the tests.
# Run from this folder: Rscript clustered_interval.R > clustered_interval.csv
#
# Each case is a list of (passes, reps) per scenario. The design is one-stage clustered by
# scenario with equal weights. survey gives the cluster-robust variance (svymean's SE), the
# design degrees of freedom (degf: G - 1) and Korn & Graubard's interval (svyciprop, "beta":
# kg_low, kg_high). low and high are the same beta interval computed here with the design
# effect clamped to [1, N/G] first, as evalkit does; where the clamp does not bind they are
# svyciprop's own. wilson_low and wilson_high are the Wilson form on the effective size with t
# on G - 1 df that evalkit used before.
suppressMessages(library(survey))

cases <- list(
  c3_mixed    = list(k = c(3, 2, 0),                      n = c(3, 3, 3)),
  c3_uneven   = list(k = c(1, 4, 9),                      n = c(2, 5, 10)),
  c6_high     = list(k = c(10, 9, 7, 10, 4, 8),            n = rep(10, 6)),
  c6_spread   = list(k = c(0, 3, 3, 1, 2, 3),              n = rep(3, 6)),
  c6_binomial = list(k = c(2, 1, 2, 2, 1, 2),              n = rep(3, 6)),
  c12_uneven  = list(k = c(5, 4, 2, 9, 1, 3, 3, 7, 0, 2, 6, 4),
                     n = c(5, 6, 3, 10, 4, 3, 5, 8, 2, 3, 9, 6)),
  c12_icc     = list(k = c(10, 10, 0, 0, 10, 10, 0, 10, 10, 0, 10, 10), n = rep(10, 12))
)

cat("case,G,N,p,variance,deff,df,t,low,high,kg_low,kg_high,wilson_low,wilson_high\n")
for (name in names(cases)) {
  k <- cases[[name]]$k
  n <- cases[[name]]$n
  y <- unlist(mapply(function(ks, ns) c(rep(1, ks), rep(0, ns - ks)), k, n, SIMPLIFY = FALSE))
  s <- rep(seq_along(n), n)
  d <- svydesign(ids = ~s, data = data.frame(y = y, s = s), weights = ~1)
  m <- svymean(~y, d)
  p <- coef(m)[[1]]
  v <- vcov(m)[1, 1]
  N <- sum(n)
  G <- length(n)
  df <- degf(d)
  deff <- min(max(v / (p * (1 - p) / N), 1), N / G)
  nstar <- N / deff
  z <- qt(0.975, df)
  center <- (p + z^2 / (2 * nstar)) / (1 + z^2 / nstar)
  half <- z * sqrt(p * (1 - p) / nstar + z^2 / (4 * nstar^2)) / (1 + z^2 / nstar)
  kg <- attr(svyciprop(~y, d, method = "beta", df = df), "ci")
  neff <- nstar * (qt(0.975, N - 1) / qt(0.975, df))^2
  low <- qbeta(0.025, p * neff, (1 - p) * neff + 1)
  high <- qbeta(0.975, p * neff + 1, (1 - p) * neff)
  cat(sprintf("%s,%d,%d,%.12f,%.12e,%.12f,%d,%.12f,%.12f,%.12f,%.12f,%.12f,%.12f,%.12f\n",
              name, G, N, p, v, deff, df, z, low, high, kg[[1]], kg[[2]],
              max(0, center - half), min(1, center + half)))
}
