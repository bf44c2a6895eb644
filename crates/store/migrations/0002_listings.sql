-- Each server's last listing (its tools, resources and prompts), so the studio's palette
-- shows what a server offers while it is not started (not approved yet, or failing).
CREATE TABLE listings (
    name    text COLLATE "C" PRIMARY KEY,
    listing json NOT NULL
);
