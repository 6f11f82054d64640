# The database keeps a frozen version's review status to the moves the review makes (memos.services.review,
# memos.services.versions.freeze): a reviewer approves or sends back a version in review, a reviewer publishes
# an approved one, a newer freeze or publication supersedes; nothing moves back, and a superseded version
# never moves again. Before, any status could follow any other on a raw UPDATE (issue 31: a residue of the
# last audit). The publication time rule of 0013 stands.

from django.db import migrations

MOVES = """
CREATE OR REPLACE FUNCTION memos_frozen_version() RETURNS trigger AS $$
DECLARE
    mutable text[] := ARRAY['status', 'published_at'];
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'version % of brief % is frozen: versions are never deleted', OLD.number, OLD.brief_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF (to_jsonb(NEW) - mutable) IS DISTINCT FROM (to_jsonb(OLD) - mutable) THEN
        RAISE EXCEPTION 'version % of brief % is frozen: only its review status may change', OLD.number,
            OLD.brief_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF OLD.published_at IS NOT NULL AND NEW.published_at IS DISTINCT FROM OLD.published_at THEN
        RAISE EXCEPTION 'version % of brief % was published at %: its publication time never changes',
            OLD.number, OLD.brief_id, OLD.published_at
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF NEW.status IS DISTINCT FROM OLD.status AND NOT (
        (OLD.status = 'ready_for_review' AND NEW.status IN ('approved', 'changes_requested', 'superseded'))
        OR (OLD.status = 'approved' AND NEW.status IN ('published', 'changes_requested', 'superseded'))
        OR (OLD.status = 'changes_requested' AND NEW.status = 'superseded')
        OR (OLD.status = 'published' AND NEW.status = 'superseded')
    ) THEN
        RAISE EXCEPTION 'version % of brief % is %: the review never moves it to %', OLD.number, OLD.brief_id,
            OLD.status, NEW.status
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""

ANY_MOVE = """
CREATE OR REPLACE FUNCTION memos_frozen_version() RETURNS trigger AS $$
DECLARE
    mutable text[] := ARRAY['status', 'published_at'];
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'version % of brief % is frozen: versions are never deleted', OLD.number, OLD.brief_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF (to_jsonb(NEW) - mutable) IS DISTINCT FROM (to_jsonb(OLD) - mutable) THEN
        RAISE EXCEPTION 'version % of brief % is frozen: only its review status may change', OLD.number,
            OLD.brief_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF OLD.published_at IS NOT NULL AND NEW.published_at IS DISTINCT FROM OLD.published_at THEN
        RAISE EXCEPTION 'version % of brief % was published at %: its publication time never changes',
            OLD.number, OLD.brief_id, OLD.published_at
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""


class Migration(migrations.Migration):
    dependencies = [("memos", "0025_calibration_scorer_endpoint")]

    operations = [migrations.RunSQL(MOVES, ANY_MOVE)]
