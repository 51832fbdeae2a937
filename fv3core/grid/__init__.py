"""FV3's cubed-sphere grid: tiles and their connectivity, subdomains, metric terms, storages."""
