-- The summarizer compares a segment's new rule statements only with the project's statements
-- that share a subject word (supersession.sql, project_statements): without this index that
-- read is every statement of the project, for every segment summarized.
CREATE INDEX memory_statements_subject ON memory_statements USING gin (subject);
