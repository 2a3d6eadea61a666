ALTER INDEX events_search_day_idx RESET (fastupdate);
ALTER INDEX events_search_idx RESET (fastupdate);
