"""`make demo`: a lab mesh of WLCG-like sites, measured, archived and reported end to end."""
