# Fixture values for tests/test_pairwise_separation.py, computed once with R 4 and
# BradleyTerry2 from Debian (Rscript tests/r/pairwise_separation.R); the tests never run R.
# A won every comparison, so the maximum-likelihood estimate is infinite; BTm(br = TRUE)
# gives Firth's bias-reduced estimates (brglm), without and with a home (shown-first) term.
suppressMessages(library(BradleyTerry2))
options(digits = 12)
d <- data.frame(home = c("A", "B", "A", "C", "B", "C", "A", "D", "B", "D", "C", "D"),
                away = c("B", "A", "C", "A", "C", "B", "D", "A", "D", "B", "D", "C"),
                hw = c(3, 0, 2, 0, 2, 1, 2, 0, 1, 1, 2, 1),
                aw = c(0, 2, 0, 3, 1, 2, 0, 2, 1, 1, 1, 1))
lev <- c("A", "B", "C", "D")
d$home.team <- data.frame(team = factor(d$home, lev), at.home = 1)
d$away.team <- data.frame(team = factor(d$away, lev), at.home = 0)
plain <- BTm(cbind(hw, aw), home.team, away.team, data = d, id = "team", br = TRUE)
print(coef(plain))
#          teamB           teamC           teamD
# -3.07744952664 -3.41521495606 -3.45940022280
home <- update(plain, formula = ~ team + at.home)
print(coef(home))
#           teamB           teamC           teamD         at.home
# -2.976783284397 -3.304382412226 -3.332729992121  0.109647711565
