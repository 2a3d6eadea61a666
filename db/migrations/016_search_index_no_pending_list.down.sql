ALTER INDEX events_search_idx RESET (gin_pending_list_limit);
