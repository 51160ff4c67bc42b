-- The player-search trigger of 20261207000000_player_name_arrivals split the old list once per name in the new
-- one: `n <> ALL (string_to_array(OLD."player_names", ...))` is an expression over the row, not a constant, so
-- PostgreSQL evaluated it again for every row of the unnest. With 30 names that is 30 splits of the old list,
-- and the arrivals' SELECT took about 100 us per changed server in the index crawl of 100,000 simulated servers,
-- more than the insert of the arrived names into their trigram index. Here the old list is split once into a
-- variable: the same names arrive (the same expression over the same array), and the trigger's upkeep per
-- changed server is about half (docs/BENCHMARKS-history.md, 2026-12-07, "the old list split once").

CREATE OR REPLACE FUNCTION "game_server_player_search_arrivals"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  arrived TEXT;
  old_names TEXT[];
BEGIN
  -- A first answer, or players on a server that had none: every name arrived.
  IF TG_OP = 'INSERT' OR OLD."player_names" = '' THEN
    arrived := NEW."player_names";
  ELSE
    old_names := string_to_array(OLD."player_names", E'\n');
    SELECT string_agg(n, E'\n') INTO arrived
    FROM unnest(string_to_array(NEW."player_names", E'\n')) AS n
    WHERE n <> ALL (old_names);
  END IF;
  IF arrived <> '' THEN
    INSERT INTO "game_server_player_search" ("game_server_id", "names") VALUES (NEW."id", arrived);
  END IF;
  RETURN NULL;
END $$;
