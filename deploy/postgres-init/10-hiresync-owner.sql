-- Run once by the postgres image when its data volume is new (docker-compose.yml
-- mounts this folder on /docker-entrypoint-initdb.d), as the image's superuser.
--
-- hiresync runs as the owner of its database, never as a superuser
-- (docs/operating.md, "Roles"): it creates its schemas (hiresync, all_accounts,
-- one per account) and owns everything in them; it needs no other privilege.
-- The password is the demo's: set your own (and in DATABASE_URL) for anything else.
create role hiresync login nosuperuser nocreatedb nocreaterole password 'hiresync';
create database hiresync owner hiresync;
-- Nobody else creates objects in its public schema (Postgres 15 and later
-- already say so; a database made from an older template may not).
\connect hiresync
revoke create on schema public from public;
