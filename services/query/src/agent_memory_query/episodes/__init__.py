"""Episodes (what agents tried and how it went) and the project's ACE playbook."""
