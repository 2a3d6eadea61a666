ALTER INDEX entity_names_trgm_idx RESET (fastupdate);
