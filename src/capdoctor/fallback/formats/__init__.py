"""One module per `capdoctor fallback --format`; `fallback.generate.FORMATS` names them (imported lazily)."""
