# The textbook example of tests/test_models_success.py: the Ohio children's wheeze data
# (Ware et al. 1984; the data set of Fitzmaurice, Laird & Ware, Applied Longitudinal
# Analysis, and of geepack's documentation): 537 children seen at ages 7 to 10, wheeze
# (resp) by age (centred at 9) and maternal smoking. Writes tests/fixtures/gee_ohio.csv once
# and prints geepack's exchangeable GEE, whose values the test holds.
library(geepack)
data(ohio)
write.csv(ohio, "tests/fixtures/gee_ohio.csv", row.names = FALSE)
fit <- geeglm(resp ~ age + smoke, id = id, data = ohio, family = binomial,
              corstr = "exchangeable", scale.fix = TRUE)
options(digits = 15)
print(summary(fit)$coefficients, digits = 15)
cat("alpha", unlist(summary(fit)$corr[1]), "\n")
