"""Explorer and figure builders, one module per concept (see CONTRIBUTING.md, "Explorers")."""
