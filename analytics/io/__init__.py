"""What goes out of and into a study database beside the report: exports for R, SPSS and
papers, and answers and ratings collected outside Telegram."""
