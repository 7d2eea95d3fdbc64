"""The study database read into tidy DataFrames from one snapshot, one study picked out of
several, and synthetic studies for tests and benchmarks."""
