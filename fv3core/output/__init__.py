"""What a run writes for people: CF netCDF and matplotlib plots."""
