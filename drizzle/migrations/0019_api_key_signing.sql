CREATE TABLE "api_key_signing" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"secret" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "api_key_signing_one_row" CHECK ("api_key_signing"."id" = 1)
);
--> statement-breakpoint
-- The signing secret: 256 bits from two random UUIDs (gen_random_uuid draws on the server's strong random source), hashed.
INSERT INTO "api_key_signing" ("secret") VALUES (encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text || clock_timestamp()::text, 'UTF8')), 'hex'));
