# Fixture values for tests/test_ranking_statistics.py: the mean rank of each option per
# system (participants' own means first) with Student's t 95% interval on the logit of the
# mean's place between 1 and the 3 options (delta method, so that it stays in 1..3), the
# plain t interval beside it, and Mann-Whitney U
# (wilcox.test, normal approximation with continuity correction, as ranks are tied) per
# option between two systems, Holm across the item's three options.
# Run: Rscript tests/r/ranking.R
orders <- list(
  a1 = "price,fit,speed", a2 = "price,speed,fit", a3 = "fit,price,speed",
  a4 = "price,fit,speed", a5 = "speed,price,fit", a6 = "price,fit,speed",
  a6 = "fit,price,speed",
  b1 = "fit,speed,price", b2 = "speed,fit,price", b3 = "fit,price,speed",
  b4 = "speed,fit,price", b5 = "fit,speed,price", b6 = "price,fit,speed"
)
rows <- do.call(rbind, lapply(seq_along(orders), function(i) {
  codes <- strsplit(orders[[i]], ",")[[1]]
  data.frame(participant = names(orders)[i], system = substr(names(orders)[i], 1, 1),
             option = codes, rank = seq_along(codes))
}))
people <- aggregate(rank ~ participant + system + option, data = rows, FUN = mean)
options(digits = 15)
ps <- c()
for (option in c("price", "fit", "speed")) {
  for (system in c("a", "b")) {
    x <- people$rank[people$option == option & people$system == system]
    ci <- t.test(x)$conf.int
    k <- 3; place <- (mean(x) - 1) / (k - 1)
    spread <- qt(0.975, length(x) - 1) * sd(x) / sqrt(length(x)) / ((k - 1) * place * (1 - place))
    bounded <- 1 + (k - 1) * plogis(qlogis(place) + c(-1, 1) * spread)
    cat(sprintf("mean %s %s n=%d mean=%.15f sd=%.15f ci=(%.15f, %.15f) t=(%.15f, %.15f) first=%.15f\n",
                option, system, length(x), mean(x), sd(x), bounded[1], bounded[2], ci[1], ci[2],
                mean(x == 1)))
  }
  a <- people$rank[people$option == option & people$system == "a"]
  b <- people$rank[people$option == option & people$system == "b"]
  test <- wilcox.test(a, b, exact = FALSE, correct = TRUE)
  ps <- c(ps, test$p.value)
  cat(sprintf("test %s W=%.15f p=%.15f\n", option, test$statistic, test$p.value))
}
cat(sprintf("holm %s\n", paste(sprintf("%.15f", p.adjust(ps, "holm")), collapse = " ")))
