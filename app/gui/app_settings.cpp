// placeholder until app_settings lands
