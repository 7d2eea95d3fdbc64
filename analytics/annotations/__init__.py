"""What annotators' ratings say: agreement between annotators and the tables of their ratings."""
