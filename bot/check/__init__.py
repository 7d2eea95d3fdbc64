"""`ozlab check`: a study file, its design and its systems looked at before the study goes
live, every problem with file, line and field."""
