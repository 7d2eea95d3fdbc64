# Fixture values for tests/test_pairwise_statistics.py, computed once with R 4 and
# BradleyTerry2 / geepack from Debian (Rscript tests/r/pairwise.R); the tests never run R.
suppressMessages({library(BradleyTerry2); library(geepack)})
options(digits = 12)

# 1. Agresti's baseball data (Categorical Data Analysis, 2nd ed., table 10.11), as
#    BradleyTerry2 ships it: team abilities, Baltimore the reference, without and with a
#    home-advantage term (BradleyTerry2's vignette, section 3.2).
data(baseball)
plain <- BTm(cbind(home.wins, away.wins), home.team, away.team, data = baseball, id = "team")
print(coef(plain)); print(sqrt(diag(vcov(plain))))
baseball$home.team <- data.frame(team = baseball$home.team, at.home = 1)
baseball$away.team <- data.frame(team = baseball$away.team, at.home = 0)
home <- update(plain, formula = ~ team + at.home)
print(coef(home)); print(sqrt(diag(vcov(home))))

# 2. Ties as half a win and the clustered sandwich: tests/fixtures/pairwise_votes.csv, a tie
#    as a win and a loss of weight 1/2 each, Bradley-Terry with a "shown first" intercept as a
#    logistic regression, alpha the anchor; the robust variance clustered by rater is
#    geepack's (independence working correlation, no small-sample factor).
votes <- read.csv("tests/fixtures/pairwise_votes.csv")
votes$vote <- seq_len(nrow(votes))
win <- votes[votes$winner != "tie", ]; win$y <- as.numeric(win$winner == "a"); win$w <- 1
tie <- votes[votes$winner == "tie", ]
long <- rbind(win, transform(tie, y = 1, w = 0.5), transform(tie, y = 0, w = 0.5))
for (s in c("beta", "gamma", "delta")) {
  long[[s]] <- (long$system_a == s) - (long$system_b == s)
}
long <- long[order(long$rater, long$vote), ]
long$cluster <- as.integer(factor(long$rater))
fit <- suppressWarnings(geeglm(y ~ beta + gamma + delta, family = binomial, data = long,
                               weights = w, id = cluster, corstr = "independence"))
print(coef(fit))
print(sqrt(diag(vcov(fit))))          # robust (sandwich) standard errors
model <- suppressWarnings(glm(y ~ beta + gamma + delta, family = binomial, data = long,
                              weights = w))
print(sqrt(diag(vcov(model))))        # model-based standard errors
