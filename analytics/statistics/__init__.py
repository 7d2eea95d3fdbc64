"""The statistics the report computes: questionnaires and constructs, comparisons between
systems, proportions, completion, data quality, system reliability and power."""
