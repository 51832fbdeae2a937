"""ENS-10 readers and writers (raw GRIB and preprocessed netCDF layouts)."""
